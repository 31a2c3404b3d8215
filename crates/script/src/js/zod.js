// The built-in `zod` (and `pi.zod`): a zod-compatible subset written for toolhost — the schema
// builders and modifiers tools use for their parameters, `parse`/`safeParse` with defaults, and
// `z.toJSONSchema`. A schema also serialises to its JSON Schema (`toJSON`), so a tool may hand
// one to `parameters` as it is. A package's own zod in the tool's `node_modules` is used instead
// when there is one.
class ZodError extends Error {
  constructor(issues) {
    super(issues.map((issue) => `${issue.path.length ? issue.path.join(".") : "value"}: ${issue.message}`).join("; "));
    this.name = "ZodError";
    this.issues = issues;
    this.errors = issues;
  }
  format() { return { _errors: this.issues.map((issue) => issue.message) }; }
  flatten() { return { formErrors: this.issues.filter((i) => i.path.length === 0).map((i) => i.message), fieldErrors: Object.fromEntries(this.issues.filter((i) => i.path.length > 0).map((i) => [i.path[0], [i.message]])) }; }
}

const kindOf = (value) => (value === null ? "null" : Array.isArray(value) ? "array" : typeof value);
const DROPPED = Symbol("dropped");

class ZodType {
  constructor(def) { this._def = def; }
  get def() { return this._def; }
  _with(changes) { return new ZodType({ ...this._def, ...changes, checks: [...(this._def.checks ?? []), ...(changes.checks ?? [])] }); }
  _check(check) { return this._with({ checks: [check] }); }
  get description() { return this._def.description; }
  describe(description) { return this._with({ description }); }
  meta(meta) { if (meta === undefined) return this._def.meta; return this._with({ meta: { ...(this._def.meta ?? {}), ...meta } }); }
  optional() { return new ZodType({ kind: "optional", inner: this }); }
  nullable() { return new ZodType({ kind: "nullable", inner: this }); }
  nullish() { return this.nullable().optional(); }
  default(value) { return new ZodType({ kind: "default", inner: this, value }); }
  prefault(value) { return this.default(value); }
  catch(value) { return new ZodType({ kind: "catch", inner: this, value }); }
  array() { return z.array(this); }
  or(other) { return z.union([this, other]); }
  and(other) { return z.intersection(this, other); }
  transform(fn) { return this._with({ transforms: [...(this._def.transforms ?? []), fn] }); }
  refine(test, message) { return this._check({ check: "refine", test, message: typeof message === "string" ? message : message && message.message }); }
  superRefine() { return this; }
  pipe() { return this; }
  brand() { return this; }
  readonly() { return this; }
  isOptional() { return this._def.kind === "optional" || this._def.kind === "default"; }
  isNullable() { return this._def.kind === "nullable"; }
  // string, number and array bounds share names
  min(n, message) { return this._check({ check: "min", value: n, message }); }
  max(n, message) { return this._check({ check: "max", value: n, message }); }
  length(n, message) { return this.min(n, message).max(n, message); }
  nonempty(message) { return this.min(1, message); }
  gt(n) { return this._check({ check: "gt", value: n }); }
  gte(n) { return this.min(n); }
  lt(n) { return this._check({ check: "lt", value: n }); }
  lte(n) { return this.max(n); }
  positive() { return this.gt(0); }
  nonnegative() { return this.min(0); }
  negative() { return this.lt(0); }
  nonpositive() { return this.max(0); }
  int() { return this._with({ integer: true }); }
  finite() { return this; }
  multipleOf(n) { return this._check({ check: "multipleOf", value: n }); }
  step(n) { return this.multipleOf(n); }
  email() { return this._with({ format: "email" }); }
  url() { return this._with({ format: "uri" }); }
  uuid() { return this._with({ format: "uuid" }); }
  cuid() { return this; }
  datetime() { return this._with({ format: "date-time" }); }
  date() { return this._with({ format: "date" }); }
  regex(pattern, message) { return this._check({ check: "regex", value: pattern, message }); }
  startsWith(prefix) { return this.regex(new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`)); }
  endsWith(suffix) { return this.regex(new RegExp(`${suffix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`)); }
  trim() { return this._with({ trim: true }); }
  toLowerCase() { return this; }
  toUpperCase() { return this; }
  // objects
  get shape() { return this._def.shape; }
  extend(shape) { return this._with({ shape: { ...this._def.shape, ...shape } }); }
  merge(other) { return this.extend(other._def.shape); }
  pick(keys) { return this._with({ shape: Object.fromEntries(Object.entries(this._def.shape).filter(([key]) => keys[key])) }); }
  omit(keys) { return this._with({ shape: Object.fromEntries(Object.entries(this._def.shape).filter(([key]) => !keys[key])) }); }
  partial() { return this._with({ shape: Object.fromEntries(Object.entries(this._def.shape).map(([key, value]) => [key, value.isOptional() ? value : value.optional()])) }); }
  required() { return this._with({ shape: Object.fromEntries(Object.entries(this._def.shape).map(([key, value]) => [key, value._def.kind === "optional" ? value._def.inner : value])) }); }
  passthrough() { return this._with({ unknownKeys: "passthrough" }); }
  loose() { return this.passthrough(); }
  strict() { return this._with({ unknownKeys: "strict" }); }
  strip() { return this._with({ unknownKeys: "strip" }); }
  catchall(schema) { return this._with({ catchall: schema }); }
  keyof() { return z.enum(Object.keys(this._def.shape)); }
  get element() { return this._def.items; }
  get options() { return this._def.options ?? this._def.values; }
  get enum() { return Object.fromEntries((this._def.values ?? []).map((v) => [v, v])); }
  unwrap() { return this._def.inner ?? this; }
  parse(value) {
    const result = this.safeParse(value);
    if (!result.success) throw result.error;
    return result.data;
  }
  async parseAsync(value) { return this.parse(value); }
  safeParse(value) {
    const issues = [];
    const data = run(this, value, [], issues);
    return issues.length === 0 ? { success: true, data } : { success: false, error: new ZodError(issues) };
  }
  async safeParseAsync(value) { return this.safeParse(value); }
  toJSONSchema() { return toJSONSchema(this); }
  toJSON() { return toJSONSchema(this); }
}

const issue = (issues, path, message) => { issues.push({ path, message, code: "custom" }); };
function checks(schema, value, path, issues) {
  const size = typeof value === "string" || Array.isArray(value) ? value.length : value;
  for (const check of schema._def.checks ?? []) {
    const fail = (text) => issue(issues, path, check.message ?? text);
    if (check.check === "min" && size < check.value) fail(`must be at least ${check.value}`);
    if (check.check === "max" && size > check.value) fail(`must be at most ${check.value}`);
    if (check.check === "gt" && !(value > check.value)) fail(`must be greater than ${check.value}`);
    if (check.check === "lt" && !(value < check.value)) fail(`must be less than ${check.value}`);
    if (check.check === "multipleOf" && value % check.value !== 0) fail(`must be a multiple of ${check.value}`);
    if (check.check === "regex" && !check.value.test(value)) fail(`must match ${check.value}`);
    if (check.check === "refine" && !check.test(value)) fail("is invalid");
  }
}
function run(schema, value, path, issues) {
  const def = schema._def;
  const expect = (kind, ok) => { if (!ok) { issue(issues, path, `expected ${kind}, received ${kindOf(value)}`); return false; } return true; };
  let out = value;
  switch (def.kind) {
    case "optional": return value === undefined ? undefined : run(def.inner, value, path, issues);
    case "nullable": return value === null ? null : run(def.inner, value, path, issues);
    case "default": return run(def.inner, value === undefined ? (typeof def.value === "function" ? def.value() : def.value) : value, path, issues);
    case "catch": { const inner = []; const data = run(def.inner, value, path, inner); return inner.length ? def.value : data; }
    case "string": if (def.coerce && value !== undefined) out = String(value); if (!expect("string", typeof out === "string")) return out; if (def.trim) out = out.trim(); break;
    case "number": if (def.coerce) out = Number(value); if (!expect("number", typeof out === "number" && !Number.isNaN(out))) return out; if (def.integer && !Number.isInteger(out)) issue(issues, path, "expected an integer"); break;
    case "boolean": if (def.coerce) out = Boolean(value); if (!expect("boolean", typeof out === "boolean")) return out; break;
    case "null": expect("null", value === null); break;
    case "undefined": expect("undefined", value === undefined); break;
    case "any": break;
    case "never": issue(issues, path, "no value is allowed"); break;
    case "literal": if (!def.values.includes(value)) issue(issues, path, `expected ${def.values.map((v) => JSON.stringify(v)).join(" or ")}`); break;
    case "enum": if (!def.values.includes(value)) issue(issues, path, `expected one of ${def.values.map((v) => JSON.stringify(v)).join(", ")}`); break;
    case "array": if (!expect("array", Array.isArray(value))) return value; out = value.map((item, index) => run(def.items, item, [...path, index], issues)); break;
    case "tuple": if (!expect("array", Array.isArray(value))) return value; out = def.items.map((item, index) => run(item, value[index], [...path, index], issues)); break;
    case "object": {
      if (!expect("object", kindOf(value) === "object")) return value;
      out = def.unknownKeys === "passthrough" ? { ...value } : {};
      for (const [key, field] of Object.entries(def.shape)) {
        const data = run(field, value[key], [...path, key], issues);
        if (data !== undefined) out[key] = data;
      }
      for (const key of Object.keys(value)) {
        if (key in def.shape) continue;
        if (def.catchall) out[key] = run(def.catchall, value[key], [...path, key], issues);
        else if (def.unknownKeys === "strict") issue(issues, [...path, key], "unrecognized key");
      }
      break;
    }
    case "record": {
      if (!expect("object", kindOf(value) === "object")) return value;
      out = Object.fromEntries(Object.entries(value).map(([key, item]) => [key, run(def.values, item, [...path, key], issues)]));
      break;
    }
    case "union": {
      for (const option of def.options) {
        const inner = [];
        const data = run(option, value, path, inner);
        if (inner.length === 0) return data;
      }
      issue(issues, path, "matched none of the allowed shapes");
      return value;
    }
    case "intersection": { const a = run(def.left, value, path, issues); const b = run(def.right, value, path, issues); out = kindOf(a) === "object" ? { ...a, ...b } : b; break; }
    case "lazy": return run(def.getter(), value, path, issues);
    default: break;
  }
  if (issues.length === 0) checks(schema, out, path, issues);
  for (const transform of def.transforms ?? []) out = transform(out);
  return out;
}

const annotate = (schema, json) => {
  const def = schema._def;
  if (def.description !== undefined) json.description = def.description;
  if (def.meta) { const { id, ...rest } = def.meta; Object.assign(json, rest); }
  return json;
};
function toJSONSchema(schema) {
  const def = schema._def;
  const bounds = (json, min, max) => {
    for (const check of def.checks ?? []) {
      if (check.check === "min") json[min] = check.value;
      if (check.check === "max") json[max] = check.value;
      if (check.check === "gt") json.exclusiveMinimum = check.value;
      if (check.check === "lt") json.exclusiveMaximum = check.value;
      if (check.check === "multipleOf") json.multipleOf = check.value;
      if (check.check === "regex") json.pattern = check.value.source;
    }
    return json;
  };
  let json;
  switch (def.kind) {
    case "optional": return toJSONSchema(def.inner);
    case "catch": return toJSONSchema(def.inner);
    case "default": return annotate(schema, { ...toJSONSchema(def.inner), default: typeof def.value === "function" ? def.value() : def.value });
    case "nullable": json = { anyOf: [toJSONSchema(def.inner), { type: "null" }] }; break;
    case "string": json = bounds({ type: "string", ...(def.format ? { format: def.format } : {}) }, "minLength", "maxLength"); break;
    case "number": json = bounds({ type: def.integer ? "integer" : "number" }, "minimum", "maximum"); break;
    case "boolean": json = { type: "boolean" }; break;
    case "null": json = { type: "null" }; break;
    case "undefined": case "any": json = {}; break;
    case "never": json = { not: {} }; break;
    case "literal": json = def.values.length === 1 ? { type: kindOf(def.values[0]), const: def.values[0] } : { enum: def.values }; break;
    case "enum": json = { type: def.values.every((v) => typeof v === "number") ? "number" : "string", enum: def.values }; break;
    case "array": json = bounds({ type: "array", items: toJSONSchema(def.items) }, "minItems", "maxItems"); break;
    case "tuple": json = { type: "array", prefixItems: def.items.map(toJSONSchema) }; break;
    case "object": {
      const properties = {};
      const required = [];
      for (const [key, field] of Object.entries(def.shape)) {
        properties[key] = toJSONSchema(field);
        if (!field.isOptional()) required.push(key);
      }
      json = { type: "object", properties, ...(required.length ? { required } : {}) };
      if (def.unknownKeys === "strict") json.additionalProperties = false;
      if (def.catchall) json.additionalProperties = toJSONSchema(def.catchall);
      break;
    }
    case "record": json = { type: "object", additionalProperties: toJSONSchema(def.values) }; break;
    case "union": json = { anyOf: def.options.map(toJSONSchema) }; break;
    case "intersection": json = { allOf: [toJSONSchema(def.left), toJSONSchema(def.right)] }; break;
    case "lazy": json = toJSONSchema(def.getter()); break;
    default: json = {};
  }
  return annotate(schema, json);
}

const make = (kind, extra = {}) => (params) => new ZodType({ kind, ...extra, ...(typeof params === "string" ? { message: params } : params && params.description ? { description: params.description } : {}) });
const z = {
  string: make("string"),
  number: make("number"),
  int: make("number", { integer: true }),
  boolean: make("boolean"),
  null: make("null"),
  undefined: make("undefined"),
  void: make("undefined"),
  any: make("any"),
  unknown: make("any"),
  never: make("never"),
  date: make("string", { format: "date-time" }),
  bigint: make("number", { integer: true }),
  email: make("string", { format: "email" }),
  url: make("string", { format: "uri" }),
  uuid: make("string", { format: "uuid" }),
  literal: (value) => new ZodType({ kind: "literal", values: Array.isArray(value) ? value : [value] }),
  enum: (values) => new ZodType({ kind: "enum", values: Array.isArray(values) ? [...values] : Object.values(values) }),
  nativeEnum: (object) => new ZodType({ kind: "enum", values: [...new Set(Object.keys(object).filter((key) => Number.isNaN(Number(key))).map((key) => object[key]))] }),
  array: (items, params) => new ZodType({ kind: "array", items, ...(params && params.description ? { description: params.description } : {}) }),
  tuple: (items) => new ZodType({ kind: "tuple", items }),
  object: (shape = {}, params) => new ZodType({ kind: "object", shape, unknownKeys: "strip", ...(params && params.description ? { description: params.description } : {}) }),
  strictObject: (shape = {}) => new ZodType({ kind: "object", shape, unknownKeys: "strict" }),
  looseObject: (shape = {}) => new ZodType({ kind: "object", shape, unknownKeys: "passthrough" }),
  record: (key, values) => new ZodType({ kind: "record", values: values ?? key }),
  union: (options) => new ZodType({ kind: "union", options }),
  discriminatedUnion: (_key, options) => new ZodType({ kind: "union", options }),
  intersection: (left, right) => new ZodType({ kind: "intersection", left, right }),
  optional: (schema) => schema.optional(),
  nullable: (schema) => schema.nullable(),
  lazy: (getter) => new ZodType({ kind: "lazy", getter }),
  preprocess: (_fn, schema) => schema,
  custom: () => new ZodType({ kind: "any" }),
  instanceof: () => new ZodType({ kind: "any" }),
  toJSONSchema: (schema) => toJSONSchema(schema),
  ZodType, ZodError,
  ZodSchema: ZodType, ZodObject: ZodType, ZodString: ZodType, ZodNumber: ZodType, ZodArray: ZodType,
};
z.coerce = {
  string: make("string", { coerce: true }),
  number: make("number", { coerce: true }),
  boolean: make("boolean", { coerce: true }),
  date: make("string", { format: "date-time" }),
};
z.z = z;
module.exports = z;

// The built-in `@sinclair/typebox`: a `Type` builder whose schemas serialise to the same JSON
// Schema as TypeBox 0.34 (its Kind and Optional markers are symbols, so JSON never shows them).
const Kind = Symbol.for("TypeBox.Kind");
const OptionalKind = Symbol.for("TypeBox.Optional");
const Hint = Symbol.for("TypeBox.Hint");

// TypeBox's CreateType: options first, then the schema's own keys.
const create = (schema, options) => (options === undefined ? schema : { ...options, ...schema });
const clone = (schema) => {
  if (Array.isArray(schema)) return schema.map(clone);
  if (schema === null || typeof schema !== "object") return schema;
  const copy = {};
  for (const key of Reflect.ownKeys(schema)) copy[key] = clone(schema[key]);
  return copy;
};
const isOptional = (schema) => schema !== null && typeof schema === "object" && schema[OptionalKind] === "Optional";

const PatternStringExact = "^(.*)$";
const PatternNumberExact = "^(0|[1-9][0-9]*)$";

function Never(options) { return create({ [Kind]: "Never", not: {} }, options); }
function Literal(value, options) { return create({ [Kind]: "Literal", const: value, type: typeof value }, options); }
function Union(types, options) {
  if (types.length === 0) return Never(options);
  if (types.length === 1) return create(clone(types[0]), options);
  return create({ [Kind]: "Union", anyOf: clone(types) }, options);
}
function _Object(properties, options) {
  const required = Object.keys(properties).filter((key) => !isOptional(properties[key]));
  const copied = {};
  for (const key of Object.keys(properties)) copied[key] = clone(properties[key]);
  const schema = required.length > 0
    ? { [Kind]: "Object", type: "object", properties: copied, required }
    : { [Kind]: "Object", type: "object", properties: copied };
  return create(schema, options);
}
function Record(key, value, options) {
  const kind = key && key[Kind];
  if (kind === "Union" || kind === "Literal") {
    const keys = kind === "Union" ? key.anyOf.map((literal) => literal.const) : [key.const];
    const properties = {};
    for (const name of keys) properties[name] = clone(value);
    return _Object(properties, options);
  }
  const pattern = kind === "Number" || kind === "Integer"
    ? PatternNumberExact
    : (key && typeof key.pattern === "string" ? key.pattern : PatternStringExact);
  return create({ [Kind]: "Record", type: "object", patternProperties: { [pattern]: clone(value) } }, options);
}
function Enum(item, options) {
  if (item === undefined || item === null) throw new Error("Enum undefined or empty");
  const values = [...new Set(Object.getOwnPropertyNames(item).filter((key) => isNaN(key)).map((key) => item[key]))];
  return Union(values.map((value) => Literal(value)), { ...options, [Hint]: "Enum" });
}

const Type = Object.freeze({
  Any: (options) => create({ [Kind]: "Any" }, options),
  Array: (items, options) => create({ [Kind]: "Array", type: "array", items: clone(items) }, options),
  Boolean: (options) => create({ [Kind]: "Boolean", type: "boolean" }, options),
  Enum,
  Integer: (options) => create({ [Kind]: "Integer", type: "integer" }, options),
  Literal,
  Never,
  Null: (options) => create({ [Kind]: "Null", type: "null" }, options),
  Number: (options) => create({ [Kind]: "Number", type: "number" }, options),
  Object: _Object,
  Optional: (schema) => ({ ...clone(schema), [OptionalKind]: "Optional" }),
  Record,
  String: (options) => create({ [Kind]: "String", type: "string" }, options),
  StringEnum: (values, options) => StringEnum(values, options),
  Union,
  Unknown: (options) => create({ [Kind]: "Unknown" }, options),
  Unsafe: (schema = {}) => ({ ...schema, [Kind]: schema[Kind] ?? "Unsafe" }),
});

// pi's `StringEnum`: a plain `{ type: "string", enum }`, which every provider accepts.
function StringEnum(values, options) {
  return Type.Unsafe({
    type: "string",
    enum: [...values],
    ...(options && options.description && { description: options.description }),
    ...(options && options.default && { default: options.default }),
  });
}

module.exports = { Type, Kind, OptionalKind, Hint, StringEnum, default: Type, __esModule: true };

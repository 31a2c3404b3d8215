// The built-in `node:util`: promisify, format and inspect, and the small helpers tools use.
const custom = Symbol.for("nodejs.util.promisify.custom");
const inspectCustom = Symbol.for("nodejs.util.inspect.custom");

function promisify(original) {
  if (typeof original !== "function") throw new TypeError('The "original" argument must be of type function');
  if (original[custom]) return original[custom];
  return function (...args) {
    return new Promise((resolve, reject) => {
      original.call(this, ...args, (error, ...values) => {
        if (error) reject(error);
        else resolve(values.length > 1 ? values : values[0]);
      });
    });
  };
}
promisify.custom = custom;

function callbackify(original) {
  return function (...args) {
    const callback = args.pop();
    original.apply(this, args).then((value) => callback(null, value), (error) => callback(error));
  };
}

function inspect(value, options = {}) {
  const depth = options.depth ?? 2;
  const seen = new Set();
  const show = (item, level) => {
    if (item === null) return "null";
    if (item === undefined) return "undefined";
    if (typeof item === "string") return level === 0 ? item : `'${item.replace(/'/g, "\\'")}'`;
    if (typeof item === "bigint") return `${item}n`;
    if (typeof item === "symbol") return item.toString();
    if (typeof item === "function") return `[Function: ${item.name || "(anonymous)"}]`;
    if (typeof item !== "object") return String(item);
    if (typeof item[inspectCustom] === "function") return String(item[inspectCustom](depth - level, options));
    if (item instanceof Error) return item.stack ? `${item.name}: ${item.message}\n${item.stack}` : `${item.name}: ${item.message}`;
    if (item instanceof Date) return item.toISOString();
    if (item instanceof RegExp) return String(item);
    if (seen.has(item)) return "[Circular *1]";
    if (level > depth) return Array.isArray(item) ? "[Array]" : "[Object]";
    seen.add(item);
    let text;
    if (Array.isArray(item)) text = item.length === 0 ? "[]" : `[ ${item.map((v) => show(v, level + 1)).join(", ")} ]`;
    else if (item instanceof Map) text = `Map(${item.size}) { ${[...item].map(([k, v]) => `${show(k, level + 1)} => ${show(v, level + 1)}`).join(", ")} }`;
    else if (item instanceof Set) text = `Set(${item.size}) { ${[...item].map((v) => show(v, level + 1)).join(", ")} }`;
    else if (ArrayBuffer.isView(item)) text = `${item.constructor.name}(${item.length}) [ ${Array.from(item).slice(0, 50).join(", ")} ]`;
    else {
      const entries = Object.keys(item).map((key) => `${/^[A-Za-z_$][\w$]*$/.test(key) ? key : `'${key}'`}: ${show(item[key], level + 1)}`);
      const name = item.constructor && item.constructor !== Object && item.constructor.name ? `${item.constructor.name} ` : "";
      text = entries.length === 0 ? `${name}{}` : `${name}{ ${entries.join(", ")} }`;
    }
    seen.delete(item);
    return text;
  };
  return show(value, typeof value === "string" ? 1 : 0);
}
inspect.custom = inspectCustom;

function format(first, ...args) {
  if (typeof first !== "string") return [first, ...args].map((v) => (typeof v === "string" ? v : inspect(v))).join(" ");
  let index = 0;
  let text = first.replace(/%[sdifjoOc%]/g, (token) => {
    if (token === "%%") return "%";
    if (index >= args.length) return token;
    const value = args[index++];
    switch (token) {
      case "%s": return typeof value === "string" ? value : typeof value === "object" && value !== null ? inspect(value, { depth: 0 }) : String(value);
      case "%d": return typeof value === "object" ? "NaN" : String(Number(value));
      case "%i": return String(parseInt(value, 10));
      case "%f": return String(parseFloat(value));
      case "%j": try { return JSON.stringify(value); } catch { return "[Circular]"; }
      case "%c": return "";
      default: return inspect(value);
    }
  });
  for (const rest of args.slice(index)) text += ` ${typeof rest === "string" ? rest : inspect(rest)}`;
  return text;
}

const isDeepStrictEqual = (a, b) => {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => isDeepStrictEqual(a[key], b[key]));
};
const types = {
  isPromise: (v) => v instanceof Promise,
  isDate: (v) => v instanceof Date,
  isRegExp: (v) => v instanceof RegExp,
  isMap: (v) => v instanceof Map,
  isSet: (v) => v instanceof Set,
  isTypedArray: (v) => ArrayBuffer.isView(v) && !(v instanceof DataView),
  isUint8Array: (v) => v instanceof Uint8Array,
  isNativeError: (v) => v instanceof Error,
  isAsyncFunction: (v) => typeof v === "function" && v.constructor && v.constructor.name === "AsyncFunction",
};
module.exports = {
  promisify,
  callbackify,
  format,
  formatWithOptions: (_options, ...args) => format(...args),
  inspect,
  isDeepStrictEqual,
  inherits: (child, parent) => { Object.setPrototypeOf(child.prototype, parent.prototype); Object.setPrototypeOf(child, parent); },
  deprecate: (fn) => fn,
  debuglog: () => () => {},
  types,
  isArray: Array.isArray,
  stripVTControlCharacters: (text) => String(text).replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, ""),
  TextEncoder: globalThis.TextEncoder,
  TextDecoder: globalThis.TextDecoder,
};

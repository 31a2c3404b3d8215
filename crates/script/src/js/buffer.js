// The built-in `Buffer` (and `node:buffer`): bytes as a Uint8Array with Node's encodings
// (utf8, hex, base64, base64url, latin1/binary, ascii) and the common helpers.
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const BASE64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const BASE64_INDEX = new Map([...BASE64].map((c, i) => [c, i]));
BASE64_INDEX.set("-", 62).set("_", 63);

const normalizeEncoding = (encoding = "utf8") => {
  const name = String(encoding).toLowerCase().replace("-", "");
  if (name === "utf8" || name === "hex" || name === "base64" || name === "base64url" || name === "ascii") return name;
  if (name === "latin1" || name === "binary") return "latin1";
  if (name === "ucs2" || name === "utf16le") return "utf16le";
  throw new TypeError(`Unknown encoding: ${encoding}`);
};

function encodeBase64(bytes, url) {
  let out = "";
  for (let i = 0; i < bytes.length; i += 3) {
    const n = (bytes[i] << 16) | ((bytes[i + 1] ?? 0) << 8) | (bytes[i + 2] ?? 0);
    out += BASE64[(n >> 18) & 63] + BASE64[(n >> 12) & 63];
    out += i + 1 < bytes.length ? BASE64[(n >> 6) & 63] : "=";
    out += i + 2 < bytes.length ? BASE64[n & 63] : "=";
  }
  return url ? out.replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "") : out;
}
function decodeBase64(text) {
  const clean = String(text).replace(/[^A-Za-z0-9+/\-_]/g, "");
  const bytes = [];
  for (let i = 0; i < clean.length; i += 4) {
    const chunk = clean.slice(i, i + 4);
    const n = [...chunk.padEnd(4, "A")].reduce((acc, c) => (acc << 6) | (BASE64_INDEX.get(c) ?? 0), 0);
    bytes.push((n >> 16) & 255);
    if (chunk.length > 2) bytes.push((n >> 8) & 255);
    if (chunk.length > 3) bytes.push(n & 255);
  }
  return bytes;
}

class Buffer extends Uint8Array {
  static from(value, encodingOrOffset, length) {
    if (typeof value === "string") return Buffer.fromString(value, encodingOrOffset);
    if (value instanceof ArrayBuffer) return new Buffer(value, encodingOrOffset ?? 0, length ?? value.byteLength - (encodingOrOffset ?? 0));
    if (ArrayBuffer.isView(value)) return new Buffer(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
    if (value && value.type === "Buffer" && Array.isArray(value.data)) return new Buffer(value.data);
    if (Array.isArray(value) || (value && typeof value.length === "number")) return new Buffer(Array.from(value, (b) => b & 255));
    throw new TypeError("Buffer.from expects a string, an array, an ArrayBuffer or a typed array");
  }
  static fromString(text, encoding) {
    switch (normalizeEncoding(encoding)) {
      case "hex": {
        const bytes = [];
        for (let i = 0; i + 1 < text.length; i += 2) {
          const byte = parseInt(text.slice(i, i + 2), 16);
          if (Number.isNaN(byte)) break;
          bytes.push(byte);
        }
        return new Buffer(bytes);
      }
      case "base64":
      case "base64url": return new Buffer(decodeBase64(text));
      case "latin1":
      case "ascii": return new Buffer(Array.from(text, (c) => c.charCodeAt(0) & 255));
      case "utf16le": {
        const bytes = [];
        for (let i = 0; i < text.length; i++) { const c = text.charCodeAt(i); bytes.push(c & 255, c >> 8); }
        return new Buffer(bytes);
      }
      default: {
        const bytes = encoder.encode(text);
        return new Buffer(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      }
    }
  }
  static alloc(size, fill = 0) { const buffer = new Buffer(size); if (fill !== 0) buffer.fill(typeof fill === "string" ? fill.charCodeAt(0) : fill); return buffer; }
  static allocUnsafe(size) { return new Buffer(size); }
  static isBuffer(value) { return value instanceof Buffer; }
  static isEncoding(encoding) { try { normalizeEncoding(encoding); return true; } catch { return false; } }
  static byteLength(value, encoding) { return typeof value === "string" ? Buffer.fromString(value, encoding).length : value.byteLength; }
  static concat(list, total) {
    const length = total ?? list.reduce((sum, item) => sum + item.length, 0);
    const out = Buffer.alloc(length);
    let at = 0;
    for (const item of list) { if (at >= length) break; out.set(item.subarray(0, length - at), at); at += item.length; }
    return out;
  }
  static compare(a, b) { return a.compare(b); }
  toString(encoding = "utf8", start = 0, end = this.length) {
    const bytes = this.subarray(start, end);
    switch (normalizeEncoding(encoding)) {
      case "hex": return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
      case "base64": return encodeBase64(bytes, false);
      case "base64url": return encodeBase64(bytes, true);
      case "latin1": return Array.from(bytes, (b) => String.fromCharCode(b)).join("");
      case "ascii": return Array.from(bytes, (b) => String.fromCharCode(b & 127)).join("");
      case "utf16le": { let out = ""; for (let i = 0; i + 1 < bytes.length; i += 2) out += String.fromCharCode(bytes[i] | (bytes[i + 1] << 8)); return out; }
      default: return decoder.decode(bytes);
    }
  }
  toJSON() { return { type: "Buffer", data: Array.from(this) }; }
  equals(other) { return this.compare(other) === 0; }
  compare(other) {
    for (let i = 0; i < Math.min(this.length, other.length); i++) if (this[i] !== other[i]) return this[i] < other[i] ? -1 : 1;
    return this.length === other.length ? 0 : this.length < other.length ? -1 : 1;
  }
  subarray(start, end) { const view = super.subarray(start, end); return new Buffer(view.buffer, view.byteOffset, view.length); }
  slice(start, end) { return this.subarray(start, end); }
  write(text, offset = 0, length, encoding = "utf8") {
    if (typeof offset === "string") { encoding = offset; offset = 0; }
    const bytes = Buffer.fromString(text, encoding).subarray(0, length ?? this.length - offset);
    this.set(bytes.subarray(0, this.length - offset), offset);
    return Math.min(bytes.length, this.length - offset);
  }
  copy(target, targetStart = 0, start = 0, end = this.length) { const part = this.subarray(start, end); target.set(part, targetStart); return part.length; }
  includes(value, from) { return this.indexOf(value, from) !== -1; }
  indexOf(value, from = 0) {
    if (typeof value === "number") return super.indexOf(value, from);
    const needle = typeof value === "string" ? Buffer.from(value) : value;
    outer: for (let i = from; i <= this.length - needle.length; i++) {
      for (let j = 0; j < needle.length; j++) if (this[i + j] !== needle[j]) continue outer;
      return i;
    }
    return -1;
  }
  readUInt8(at = 0) { return this[at]; }
  readUInt16BE(at = 0) { return (this[at] << 8) | this[at + 1]; }
  readUInt16LE(at = 0) { return this[at] | (this[at + 1] << 8); }
  readUInt32BE(at = 0) { return ((this[at] << 24) >>> 0) + ((this[at + 1] << 16) | (this[at + 2] << 8) | this[at + 3]); }
  readUInt32LE(at = 0) { return ((this[at + 3] << 24) >>> 0) + ((this[at + 2] << 16) | (this[at + 1] << 8) | this[at]); }
  writeUInt8(value, at = 0) { this[at] = value; return at + 1; }
}
Buffer.poolSize = 8192;
module.exports = { Buffer, kMaxLength: 2 ** 31 - 1, constants: { MAX_LENGTH: 2 ** 31 - 1 } };

// The built-in `node:crypto`: random bytes and UUIDs from the operating system, and digests
// (sha256, sha512, sha384, sha224, sha1, md5) and HMACs computed in Rust.
const { host } = globalThis.__toolhost;
const { Buffer } = require("node:buffer");

const bytesOf = (data, encoding) => (typeof data === "string" ? Buffer.from(data, encoding || "utf8") : Buffer.from(data));
const randomBytes = (size, callback) => {
  const bytes = Buffer.from(host.randomBytes(Number(size)), "base64");
  if (typeof callback === "function") { queueMicrotask(() => callback(null, bytes)); return undefined; }
  return bytes;
};
const randomUUID = () => {
  const bytes = randomBytes(16);
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};
const digestOf = (algorithm, bytes) => Buffer.from(host.digest(algorithm, bytes.toString("base64")), "base64");
const output = (bytes, encoding) => (encoding ? bytes.toString(encoding) : bytes);

class Hash {
  #algorithm;
  #chunks = [];
  #done = false;
  constructor(algorithm) {
    this.#algorithm = String(algorithm);
    digestOf(this.#algorithm, Buffer.alloc(0));
  }
  update(data, encoding) {
    if (this.#done) throw new Error("Digest already called");
    this.#chunks.push(bytesOf(data, encoding));
    return this;
  }
  digest(encoding) {
    this.#done = true;
    return output(digestOf(this.#algorithm, Buffer.concat(this.#chunks)), encoding);
  }
  copy() { const copy = new Hash(this.#algorithm); for (const chunk of this.#chunks) copy.update(chunk); return copy; }
}
const BLOCK_SIZE = { sha512: 128, sha384: 128 };
class Hmac {
  #inner;
  #outerKey;
  #algorithm;
  constructor(algorithm, key) {
    this.#algorithm = String(algorithm).toLowerCase();
    const block = BLOCK_SIZE[this.#algorithm] ?? 64;
    let keyBytes = bytesOf(key);
    if (keyBytes.length > block) keyBytes = digestOf(this.#algorithm, keyBytes);
    const padded = Buffer.alloc(block);
    padded.set(keyBytes);
    this.#inner = new Hash(this.#algorithm).update(Buffer.from(padded.map((b) => b ^ 0x36)));
    this.#outerKey = Buffer.from(padded.map((b) => b ^ 0x5c));
  }
  update(data, encoding) { this.#inner.update(data, encoding); return this; }
  digest(encoding) {
    return new Hash(this.#algorithm).update(this.#outerKey).update(this.#inner.digest()).digest(encoding);
  }
}
const unavailable = (name) => () => {
  throw new Error(`crypto.${name} is not available to custom tools (randomBytes, randomUUID, createHash and createHmac are)`);
};
const getRandomValues = (array) => { array.set(randomBytes(array.byteLength).subarray(0, array.length)); return array; };
const webcrypto = { getRandomValues, randomUUID, subtle: undefined };
if (typeof globalThis.crypto === "undefined") globalThis.crypto = webcrypto;
module.exports = {
  randomBytes,
  randomUUID,
  randomInt: (min, max) => {
    if (max === undefined) { max = min; min = 0; }
    const span = max - min;
    return min + (randomBytes(4).readUInt32BE(0) % span);
  },
  getRandomValues,
  createHash: (algorithm) => new Hash(algorithm),
  createHmac: (algorithm, key) => new Hmac(algorithm, key),
  getHashes: () => ["md5", "sha1", "sha224", "sha256", "sha384", "sha512"],
  timingSafeEqual: (a, b) => { if (a.length !== b.length) throw new RangeError("Input buffers must have the same byte length"); let diff = 0; for (let i = 0; i < a.length; i++) diff |= a[i] ^ b[i]; return diff === 0; },
  webcrypto,
  createCipheriv: unavailable("createCipheriv"),
  createDecipheriv: unavailable("createDecipheriv"),
  createSign: unavailable("createSign"),
  createVerify: unavailable("createVerify"),
  generateKeyPairSync: unavailable("generateKeyPairSync"),
  pbkdf2Sync: unavailable("pbkdf2Sync"),
  scryptSync: unavailable("scryptSync"),
};

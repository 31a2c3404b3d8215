// The built-in `node:string_decoder`: bytes to text across chunk boundaries (a UTF-8 character
// split between two chunks comes out whole, once its last byte arrives).
const { Buffer } = require("node:buffer");

// How many bytes at the end of `bytes` begin a UTF-8 character that is not complete yet.
const incompleteTail = (bytes) => {
  for (let back = 1; back <= Math.min(3, bytes.length); back += 1) {
    const byte = bytes[bytes.length - back];
    if ((byte & 0xc0) === 0x80) continue;
    const size = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return size > back ? back : 0;
  }
  return 0;
};

class StringDecoder {
  constructor(encoding = "utf8") {
    this.encoding = String(encoding).toLowerCase().replace("-", "");
    this.pending = new Uint8Array(0);
  }
  write(chunk) {
    if (typeof chunk === "string") return chunk;
    if (this.encoding !== "utf8") return Buffer.from(chunk).toString(this.encoding);
    const bytes = new Uint8Array(this.pending.length + chunk.length);
    bytes.set(this.pending);
    bytes.set(chunk, this.pending.length);
    const keep = incompleteTail(bytes);
    this.pending = bytes.slice(bytes.length - keep);
    return new TextDecoder().decode(bytes.slice(0, bytes.length - keep));
  }
  end(chunk) {
    const text = chunk === undefined ? "" : this.write(chunk);
    const rest = this.pending.length > 0 ? new TextDecoder().decode(this.pending) : "";
    this.pending = new Uint8Array(0);
    return text + rest;
  }
}

module.exports = { StringDecoder };

// The built-in `node:url`: `URL` and `URLSearchParams` (the engine has none; this is the part
// of the WHATWG URL that tools use) and the file URL helpers.
class URLSearchParams {
  #pairs = [];
  #onChange;
  constructor(init = "", onChange) {
    this.#onChange = onChange;
    if (typeof init === "string") {
      for (const part of init.replace(/^\?/, "").split("&")) {
        if (!part) continue;
        const [key, ...rest] = part.split("=");
        const decode = (text) => decodeURIComponent(text.replace(/\+/g, " "));
        this.#pairs.push([decode(key), decode(rest.join("="))]);
      }
    } else if (Array.isArray(init)) this.#pairs = init.map(([k, v]) => [String(k), String(v)]);
    else if (init && typeof init === "object") this.#pairs = Object.entries(init).map(([k, v]) => [k, String(v)]);
  }
  #changed() { if (this.#onChange) this.#onChange(this.toString()); }
  get size() { return this.#pairs.length; }
  append(key, value) { this.#pairs.push([String(key), String(value)]); this.#changed(); }
  set(key, value) { this.delete(key); this.append(key, value); }
  delete(key) { this.#pairs = this.#pairs.filter(([k]) => k !== key); this.#changed(); }
  get(key) { const pair = this.#pairs.find(([k]) => k === key); return pair ? pair[1] : null; }
  getAll(key) { return this.#pairs.filter(([k]) => k === key).map(([, v]) => v); }
  has(key) { return this.#pairs.some(([k]) => k === key); }
  forEach(callback) { for (const [k, v] of this.#pairs) callback(v, k, this); }
  keys() { return this.#pairs.map(([k]) => k)[Symbol.iterator](); }
  values() { return this.#pairs.map(([, v]) => v)[Symbol.iterator](); }
  entries() { return this.#pairs.map((pair) => [...pair])[Symbol.iterator](); }
  [Symbol.iterator]() { return this.entries(); }
  sort() { this.#pairs.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)); this.#changed(); }
  toString() {
    const encode = (text) => encodeURIComponent(text).replace(/%20/g, "+");
    return this.#pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join("&");
  }
}

const PATTERN = /^([a-zA-Z][a-zA-Z0-9+.-]*):(?:\/\/(?:([^:@/?#]*)(?::([^@/?#]*))?@)?(\[[^\]]*\]|[^:/?#]*)(?::(\d*))?)?([^?#]*)(\?[^#]*)?(#.*)?$/;
const DEFAULT_PORTS = { "http:": "80", "https:": "443", "ws:": "80", "wss:": "443", "ftp:": "21" };
const dotSegments = (path) => {
  const out = [];
  for (const part of path.split("/").slice(1)) {
    if (part === "..") out.pop();
    else if (part !== ".") out.push(part);
  }
  const last = path.split("/").pop();
  return "/" + out.join("/") + (last === "." || last === ".." ? "/" : "");
};

class URL {
  #parts;
  constructor(input, base) {
    let text = String(input).trim();
    if (base !== undefined && !PATTERN.test(text)) {
      const root = new URL(base);
      if (text.startsWith("//")) text = `${root.protocol}${text}`;
      else if (text.startsWith("/")) text = `${root.origin === "null" ? `${root.protocol}//` : root.origin}${text}`;
      else if (text.startsWith("?")) text = `${root.origin}${root.pathname}${text}`;
      else if (text.startsWith("#")) text = `${root.origin}${root.pathname}${root.search}${text}`;
      else text = `${root.protocol}//${root.host}${root.pathname.replace(/[^/]*$/, "")}${text}`;
    }
    const match = PATTERN.exec(text);
    if (!match) throw new TypeError(`Invalid URL: ${input}`);
    const [, scheme, username = "", password = "", host = "", port = "", path = "", search = "", hash = ""] = match;
    const protocol = `${scheme.toLowerCase()}:`;
    const special = protocol in DEFAULT_PORTS || protocol === "file:";
    this.#parts = {
      protocol, username, password,
      hostname: host.toLowerCase(),
      port: DEFAULT_PORTS[protocol] === port ? "" : port,
      pathname: special ? dotSegments(path || "/") : path,
      search: search === "?" ? "" : search,
      hash: hash === "#" ? "" : hash,
      slashes: text.slice(scheme.length + 1).startsWith("//"),
    };
  }
  get protocol() { return this.#parts.protocol; }
  set protocol(value) { this.#parts.protocol = String(value).replace(/:?$/, ":"); }
  get username() { return this.#parts.username; }
  get password() { return this.#parts.password; }
  get hostname() { return this.#parts.hostname; }
  set hostname(value) { this.#parts.hostname = String(value); }
  get port() { return this.#parts.port; }
  set port(value) { this.#parts.port = String(value); }
  get host() { return this.#parts.hostname + (this.#parts.port ? `:${this.#parts.port}` : ""); }
  get origin() { return this.#parts.protocol in DEFAULT_PORTS ? `${this.#parts.protocol}//${this.host}` : "null"; }
  get pathname() { return this.#parts.pathname; }
  set pathname(value) { this.#parts.pathname = String(value).startsWith("/") ? String(value) : `/${value}`; }
  get search() { return this.#parts.search; }
  set search(value) { const text = String(value); this.#parts.search = text === "" || text === "?" ? "" : text.startsWith("?") ? text : `?${text}`; }
  get searchParams() { return new URLSearchParams(this.#parts.search, (text) => { this.search = text; }); }
  get hash() { return this.#parts.hash; }
  set hash(value) { const text = String(value); this.#parts.hash = text === "" ? "" : text.startsWith("#") ? text : `#${text}`; }
  get href() {
    const { protocol, username, password, pathname, search, hash, slashes } = this.#parts;
    const auth = username ? `${username}${password ? `:${password}` : ""}@` : "";
    return `${protocol}${slashes ? "//" : ""}${auth}${this.host}${pathname}${search}${hash}`;
  }
  toString() { return this.href; }
  toJSON() { return this.href; }
  static canParse(input, base) { try { new URL(input, base); return true; } catch { return false; } }
}

const fileURLToPath = (url) => {
  const parsed = typeof url === "string" ? new URL(url) : url;
  if (parsed.protocol !== "file:") throw new TypeError(`The URL must be of scheme file: ${String(url)}`);
  return decodeURIComponent(parsed.pathname);
};
const pathToFileURL = (path) => {
  const absolute = require("node:path").resolve(String(path));
  return new URL(`file://${absolute.split("/").map((part) => encodeURIComponent(part)).join("/")}`);
};
module.exports = {
  URL,
  URLSearchParams,
  fileURLToPath,
  pathToFileURL,
  format: (url) => String(url),
  parse: (text) => new URL(text),
};

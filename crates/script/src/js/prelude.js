// The globals every custom tool sees: console, timers, TextEncoder/TextDecoder, AbortController
// and AbortSignal, `global`, and (made on first use) `process` and `Buffer`; and `require()`. Evaluated once per engine, before any tool module, with the Rust bindings in
// `globalThis.__toolhost_host`; they are moved into a frozen `__toolhost` and the raw object is
// deleted.
(() => {
  "use strict";
  const host = globalThis.__toolhost_host;
  delete globalThis.__toolhost_host;

  const describe = (value) => {
    if (typeof value === "string") return value;
    if (value instanceof Error) return value.stack ? `${value.name}: ${value.message}\n${value.stack}` : `${value.name}: ${value.message}`;
    try {
      const text = JSON.stringify(value);
      return text === undefined ? String(value) : text;
    } catch {
      return String(value);
    }
  };
  const format = (args) => args.map(describe).join(" ");
  globalThis.console = {
    log: (...args) => host.log("info", format(args)),
    info: (...args) => host.log("info", format(args)),
    debug: (...args) => host.log("debug", format(args)),
    trace: (...args) => host.log("trace", format(args)),
    warn: (...args) => host.log("warn", format(args)),
    error: (...args) => host.log("error", format(args)),
  };

  // Timers run on the host's clock; a cleared timer's callback never runs.
  let nextTimer = 1;
  const timers = new Map();
  globalThis.setTimeout = (callback, ms, ...args) => {
    const id = nextTimer++;
    timers.set(id, true);
    host.sleep(Math.max(0, Number(ms) || 0)).then(() => {
      if (timers.delete(id)) callback(...args);
    });
    return id;
  };
  globalThis.setInterval = (callback, ms, ...args) => {
    const id = nextTimer++;
    timers.set(id, true);
    const tick = () => host.sleep(Math.max(1, Number(ms) || 0)).then(() => {
      if (!timers.has(id)) return;
      callback(...args);
      tick();
    });
    tick();
    return id;
  };
  globalThis.clearTimeout = (id) => { timers.delete(id); };
  globalThis.clearInterval = globalThis.clearTimeout;
  globalThis.queueMicrotask = (callback) => { Promise.resolve().then(callback); };

  class TextEncoder {
    get encoding() { return "utf-8"; }
    encode(text = "") {
      const bytes = [];
      for (const char of String(text)) {
        let code = char.codePointAt(0);
        if (code >= 0xd800 && code <= 0xdfff) code = 0xfffd;
        if (code < 0x80) bytes.push(code);
        else if (code < 0x800) bytes.push(0xc0 | (code >> 6), 0x80 | (code & 63));
        else if (code < 0x10000) bytes.push(0xe0 | (code >> 12), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63));
        else bytes.push(0xf0 | (code >> 18), 0x80 | ((code >> 12) & 63), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63));
      }
      return new Uint8Array(bytes);
    }
  }
  class TextDecoder {
    constructor(label = "utf-8") {
      const name = String(label).toLowerCase();
      if (name !== "utf-8" && name !== "utf8") throw new RangeError(`TextDecoder: unsupported encoding '${label}' (only utf-8)`);
    }
    get encoding() { return "utf-8"; }
    decode(input) {
      if (input === undefined) return "";
      const bytes = input instanceof Uint8Array ? input : new Uint8Array(input.buffer ?? input);
      let out = "";
      for (let i = 0; i < bytes.length;) {
        const b = bytes[i];
        let code = 0xfffd, size = 1;
        if (b < 0x80) { code = b; }
        else if (b >= 0xc2 && b < 0xe0 && i + 1 < bytes.length && (bytes[i + 1] & 0xc0) === 0x80) { code = ((b & 31) << 6) | (bytes[i + 1] & 63); size = 2; }
        else if (b >= 0xe0 && b < 0xf0 && i + 2 < bytes.length && (bytes[i + 1] & 0xc0) === 0x80 && (bytes[i + 2] & 0xc0) === 0x80) { code = ((b & 15) << 12) | ((bytes[i + 1] & 63) << 6) | (bytes[i + 2] & 63); size = 3; }
        else if (b >= 0xf0 && b < 0xf5 && i + 3 < bytes.length && (bytes[i + 1] & 0xc0) === 0x80 && (bytes[i + 2] & 0xc0) === 0x80 && (bytes[i + 3] & 0xc0) === 0x80) { code = ((b & 7) << 18) | ((bytes[i + 1] & 63) << 12) | ((bytes[i + 2] & 63) << 6) | (bytes[i + 3] & 63); size = 4; }
        out += String.fromCodePoint(code);
        i += size;
      }
      return out;
    }
  }
  globalThis.TextEncoder = TextEncoder;
  globalThis.TextDecoder = TextDecoder;

  class AbortSignal {
    #aborted = false;
    #reason = undefined;
    #listeners = [];
    onabort = null;
    get aborted() { return this.#aborted; }
    get reason() { return this.#reason; }
    addEventListener(type, listener, options) {
      if (type !== "abort" || typeof listener !== "function") return;
      if (this.#aborted) return;
      this.#listeners.push({ listener, once: Boolean(options && options.once) });
    }
    removeEventListener(type, listener) {
      if (type !== "abort") return;
      this.#listeners = this.#listeners.filter((entry) => entry.listener !== listener);
    }
    throwIfAborted() {
      if (this.#aborted) throw this.#reason;
    }
    static abort(reason) {
      const controller = new AbortController();
      controller.abort(reason);
      return controller.signal;
    }
    static timeout(ms) {
      const controller = new AbortController();
      setTimeout(() => controller.abort(abortError("TimeoutError", "The operation timed out.")), ms);
      return controller.signal;
    }
    // Called by AbortController only.
    _abort(reason) {
      if (this.#aborted) return;
      this.#aborted = true;
      this.#reason = reason === undefined ? abortError("AbortError", "The operation was aborted.") : reason;
      const event = { type: "abort", target: this };
      const listeners = this.#listeners;
      this.#listeners = [];
      if (typeof this.onabort === "function") {
        try { this.onabort(event); } catch (error) { console.error("abort listener failed:", error); }
      }
      for (const { listener } of listeners) {
        try { listener.call(this, event); } catch (error) { console.error("abort listener failed:", error); }
      }
    }
  }
  const abortError = (name, message) => {
    const error = new Error(message);
    error.name = name;
    return error;
  };
  class AbortController {
    #signal = new AbortSignal();
    get signal() { return this.#signal; }
    abort(reason) { this.#signal._abort(reason); }
  }
  globalThis.AbortSignal = AbortSignal;
  globalThis.AbortController = AbortController;

  // require(): built-ins, and the CommonJS files and JSON of the tool's folder and its
  // node_modules. `host.resolveRequire` finds the module (or throws why not); the module's code
  // comes back compiled into the CommonJS wrapper function.
  const modules = new Map();
  const folderOf = (file) => file.slice(0, file.lastIndexOf("/")) || "/";
  const requireFrom = (from) => {
    const local = (specifier) => load(specifier, from);
    local.resolve = (specifier) => JSON.parse(host.resolveRequire(String(specifier), from)).id;
    local.cache = Object.create(null);
    return local;
  };
  const load = (specifier, from) => {
    const { id, kind } = JSON.parse(host.resolveRequire(String(specifier), from));
    const cached = modules.get(id);
    if (cached) return cached.exports;
    const file = kind === "file" ? id : "";
    const module = { id, filename: id, exports: {}, loaded: false, children: [], paths: [] };
    module.require = requireFrom(file);
    modules.set(id, module);
    try {
      host.compileCommonJs(id).call(module.exports, module.exports, module.require, module, id, file ? folderOf(file) : "/");
    } catch (error) {
      modules.delete(id);
      throw error;
    }
    module.loaded = true;
    return module.exports;
  };
  const require = requireFrom("");

  // Globals Node code expects, made when first touched so that a tool that never uses them
  // pays nothing.
  const lazyGlobal = (name, make) => {
    const settle = (value) => Object.defineProperty(globalThis, name, { value, writable: true, configurable: true });
    Object.defineProperty(globalThis, name, {
      configurable: true,
      get() { const value = make(); settle(value); return value; },
      set(value) { settle(value); },
    });
  };
  globalThis.global = globalThis;
  lazyGlobal("process", () => require("node:process"));
  lazyGlobal("Buffer", () => require("node:buffer").Buffer);
  lazyGlobal("setImmediate", () => require("node:timers").setImmediate);
  lazyGlobal("clearImmediate", () => require("node:timers").clearImmediate);
  if (typeof globalThis.URL === "undefined") {
    lazyGlobal("URL", () => require("node:url").URL);
    lazyGlobal("URLSearchParams", () => require("node:url").URLSearchParams);
  }
  if (typeof globalThis.Intl === "undefined") lazyGlobal("Intl", () => require("toolhost:intl"));
  lazyGlobal("structuredClone", () => (value) => (value === undefined ? undefined : JSON.parse(JSON.stringify(value))));
  lazyGlobal("atob", () => (text) => require("node:buffer").Buffer.from(String(text), "base64").toString("latin1"));
  lazyGlobal("btoa", () => (text) => require("node:buffer").Buffer.from(String(text), "latin1").toString("base64"));

  // What a module imports by name from a built-in that does not have it: the module still
  // loads, and the first use says which export of which built-in is missing.
  const missingExport = (module, name) => {
    const fail = () => { throw new Error(`'${name}' (imported from '${module}') is not provided by toolhost's built-in ${module}: the embedded engine has no such export`); };
    return new Proxy(function missing() {}, { apply: fail, construct: fail });
  };
  globalThis.__toolhost = Object.freeze({ host, describe, abortError, require, requireFrom, missingExport });
})();

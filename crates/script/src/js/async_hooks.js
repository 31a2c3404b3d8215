// The built-in `node:async_hooks`: `AsyncLocalStorage` without the engine's help (QuickJS does
// not follow a value across `await`): a store set by `run(store, fn)` holds while `fn` runs,
// across its awaits, until its promise settles; `enterWith` sets it until changed. Exact when
// one flow uses it at a time; interleaved runs of one module see the latest store.
class AsyncLocalStorage {
  #store = undefined;
  #enabled = true;
  getStore() { return this.#enabled ? this.#store : undefined; }
  enterWith(store) { this.#store = store; this.#enabled = true; }
  run(store, callback, ...args) {
    const previous = this.#store;
    this.#store = store;
    this.#enabled = true;
    let result;
    try {
      result = callback(...args);
    } catch (error) {
      this.#store = previous;
      throw error;
    }
    if (result && typeof result.then === "function") {
      const restore = () => { if (this.#store === store) this.#store = previous; };
      return result.then((value) => { restore(); return value; }, (error) => { restore(); throw error; });
    }
    this.#store = previous;
    return result;
  }
  exit(callback, ...args) {
    const previous = this.#store;
    this.#store = undefined;
    try { return callback(...args); } finally { this.#store = previous; }
  }
  disable() { this.#enabled = false; this.#store = undefined; }
  static bind(fn) { return fn; }
  static snapshot() { return (fn, ...args) => fn(...args); }
}

class AsyncResource {
  constructor(type) { this.type = type; }
  runInAsyncScope(fn, thisArg, ...args) { return fn.apply(thisArg, args); }
  bind(fn) { return fn.bind(this); }
  emitDestroy() { return this; }
  static bind(fn) { return fn; }
}

module.exports = {
  AsyncLocalStorage,
  AsyncResource,
  createHook: () => ({ enable() { return this; }, disable() { return this; } }),
  executionAsyncId: () => 1,
  triggerAsyncId: () => 0,
};

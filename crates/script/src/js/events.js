// The built-in `node:events`: EventEmitter, and `once` as a promise.
class EventEmitter {
  #events = new Map();
  #max = 10;
  static defaultMaxListeners = 10;
  on(name, listener) { return this.addListener(name, listener); }
  addListener(name, listener) {
    if (typeof listener !== "function") throw new TypeError('The "listener" argument must be of type function');
    if (this.#events.has("newListener") && name !== "newListener") this.emit("newListener", name, listener);
    const list = this.#events.get(name) ?? [];
    list.push(listener);
    this.#events.set(name, list);
    return this;
  }
  prependListener(name, listener) { const list = this.#events.get(name) ?? []; list.unshift(listener); this.#events.set(name, list); return this; }
  once(name, listener) {
    const wrapped = (...args) => { this.removeListener(name, wrapped); listener.apply(this, args); };
    wrapped.listener = listener;
    return this.on(name, wrapped);
  }
  prependOnceListener(name, listener) {
    const wrapped = (...args) => { this.removeListener(name, wrapped); listener.apply(this, args); };
    wrapped.listener = listener;
    return this.prependListener(name, wrapped);
  }
  off(name, listener) { return this.removeListener(name, listener); }
  removeListener(name, listener) {
    const list = this.#events.get(name);
    if (!list) return this;
    const index = list.findIndex((entry) => entry === listener || entry.listener === listener);
    if (index !== -1) list.splice(index, 1);
    if (list.length === 0) this.#events.delete(name);
    return this;
  }
  removeAllListeners(name) { if (name === undefined) this.#events.clear(); else this.#events.delete(name); return this; }
  emit(name, ...args) {
    const list = this.#events.get(name);
    if (!list || list.length === 0) {
      if (name === "error") throw args[0] instanceof Error ? args[0] : new Error(`Unhandled error. (${String(args[0])})`);
      return false;
    }
    for (const listener of [...list]) listener.apply(this, args);
    return true;
  }
  listeners(name) { return (this.#events.get(name) ?? []).map((entry) => entry.listener ?? entry); }
  rawListeners(name) { return [...(this.#events.get(name) ?? [])]; }
  listenerCount(name) { return (this.#events.get(name) ?? []).length; }
  eventNames() { return [...this.#events.keys()]; }
  setMaxListeners(count) { this.#max = count; return this; }
  getMaxListeners() { return this.#max; }
}
const once = (emitter, name) => new Promise((resolve, reject) => {
  const onError = (error) => { emitter.removeListener(name, onEvent); reject(error); };
  const onEvent = (...args) => { if (name !== "error") emitter.removeListener("error", onError); resolve(args); };
  emitter.once(name, onEvent);
  if (name !== "error") emitter.once("error", onError);
});
EventEmitter.EventEmitter = EventEmitter;
EventEmitter.once = once;
EventEmitter.default = EventEmitter;
module.exports = EventEmitter;

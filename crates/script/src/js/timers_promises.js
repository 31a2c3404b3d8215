// The built-in `node:timers/promises`: timers as promises, which an aborted signal rejects.
const { abortError } = globalThis.__toolhost;
const delay = (ms, value, options) => new Promise((resolve, reject) => {
  const signal = options && options.signal;
  if (signal && signal.aborted) { reject(abortError("AbortError", "The operation was aborted")); return; }
  const id = globalThis.setTimeout(() => resolve(value), ms);
  if (signal) signal.addEventListener("abort", () => { globalThis.clearTimeout(id); reject(abortError("AbortError", "The operation was aborted")); }, { once: true });
});
module.exports = {
  setTimeout: delay,
  setImmediate: (value, options) => delay(0, value, options),
  scheduler: { wait: (ms, options) => delay(ms, undefined, options) },
};

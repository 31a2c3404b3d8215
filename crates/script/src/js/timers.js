// The built-in `node:timers`: the host's timers, and setImmediate as a zero-delay timer.
const setImmediate = (callback, ...args) => setTimeout(callback, 0, ...args);
module.exports = {
  setTimeout: globalThis.setTimeout,
  clearTimeout: globalThis.clearTimeout,
  setInterval: globalThis.setInterval,
  clearInterval: globalThis.clearInterval,
  setImmediate,
  clearImmediate: (id) => globalThis.clearTimeout(id),
  promises: require("node:timers/promises"),
};

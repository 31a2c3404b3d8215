// The built-in `node:module`: `createRequire`, so that an ES module can require CommonJS files,
// packages and JSON of its tool folder as Node lets it.
const { requireFrom } = globalThis.__toolhost;
const fileOf = (from) => {
  const text = String(from && from.href !== undefined ? from.href : from);
  return text.startsWith("file://") ? decodeURIComponent(text.slice("file://".length)) : text;
};
module.exports = {
  createRequire: (from) => requireFrom(fileOf(from)),
  builtinModules: ["assert", "async_hooks", "buffer", "child_process", "crypto", "events", "fs", "fs/promises", "module", "os", "path", "perf_hooks", "process", "readline", "string_decoder", "timers", "timers/promises", "url", "util"],
  isBuiltin: (name) => String(name).startsWith("node:"),
};

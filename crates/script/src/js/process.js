// The built-in `process` (and `node:process`): the clean environment every child gets, read
// only; the working folder; no way to exit or signal the host.
const { host, describe } = globalThis.__toolhost;
const info = JSON.parse(host.systemInfo());
const env = Object.freeze({ ...info.env });
const started = Date.now();
const listeners = new Map();
const write = (level) => ({ write(chunk) { host.log(level, String(chunk).replace(/\n$/, "")); return true; }, isTTY: false, columns: 80 });
const refused = (what) => () => { throw new Error(`process.${what}() is not available to custom tools: return or throw from execute instead`); };
const process = {
  env,
  argv: ["toolhost"],
  argv0: "toolhost",
  execArgv: [],
  execPath: "/usr/bin/toolhost",
  platform: info.platform,
  arch: info.arch === "x86_64" ? "x64" : info.arch === "aarch64" ? "arm64" : info.arch,
  pid: info.pid,
  ppid: 0,
  title: "toolhost",
  version: "v22.0.0",
  versions: Object.freeze({ node: "22.0.0", toolhost: "embedded" }),
  release: Object.freeze({ name: "node" }),
  exitCode: undefined,
  stdout: write("info"),
  stderr: write("warn"),
  stdin: { isTTY: false, on() { return this; } },
  cwd: () => host.cwd(),
  chdir: refused("chdir"),
  exit: refused("exit"),
  abort: refused("abort"),
  kill: refused("kill"),
  umask: () => 0o22,
  uptime: () => (Date.now() - started) / 1000,
  hrtime: Object.assign((previous) => {
    const now = performance.now();
    const seconds = Math.floor(now / 1000);
    const nanos = Math.floor((now % 1000) * 1e6);
    if (!previous) return [seconds, nanos];
    let s = seconds - previous[0], n = nanos - previous[1];
    if (n < 0) { s -= 1; n += 1e9; }
    return [s, n];
  }, { bigint: () => BigInt(Math.floor(performance.now() * 1e6)) }),
  memoryUsage: () => ({ rss: 0, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 }),
  cpuUsage: () => ({ user: 0, system: 0 }),
  nextTick: (callback, ...args) => { queueMicrotask(() => callback(...args)); },
  emitWarning: (warning) => host.log("warn", describe(warning)),
  on(event, listener) { (listeners.get(event) ?? listeners.set(event, []).get(event)).push(listener); return process; },
  once(event, listener) { return process.on(event, listener); },
  off(event, listener) { listeners.set(event, (listeners.get(event) ?? []).filter((l) => l !== listener)); return process; },
  removeListener(event, listener) { return process.off(event, listener); },
  removeAllListeners(event) { if (event === undefined) listeners.clear(); else listeners.delete(event); return process; },
  emit(event, ...args) { for (const listener of listeners.get(event) ?? []) listener(...args); return (listeners.get(event) ?? []).length > 0; },
  listeners: (event) => [...(listeners.get(event) ?? [])],
  getuid: () => 1000,
  getgid: () => 1000,
  features: {},
};
if (typeof globalThis.performance === "undefined") {
  const origin = Date.now();
  globalThis.performance = { now: () => Date.now() - origin, timeOrigin: origin };
}
module.exports = process;

// The built-in `node:os`: what a tool may know of the machine (the home and temp folders the
// host uses, the platform); nothing it could change.
const { host } = globalThis.__toolhost;
const info = JSON.parse(host.systemInfo());
const home = info.home ?? "/";
const arch = info.arch === "x86_64" ? "x64" : info.arch === "aarch64" ? "arm64" : info.arch;
const os = {
  EOL: "\n",
  devNull: "/dev/null",
  homedir: () => home,
  tmpdir: () => info.tmpdir.replace(/\/+$/, "") || "/tmp",
  hostname: () => info.hostname,
  platform: () => info.platform,
  type: () => (info.platform === "linux" ? "Linux" : info.platform === "macos" ? "Darwin" : info.platform),
  arch: () => arch,
  machine: () => info.arch,
  release: () => "",
  version: () => "",
  endianness: () => "LE",
  uptime: () => 0,
  loadavg: () => [0, 0, 0],
  totalmem: () => 0,
  freemem: () => 0,
  availableParallelism: () => info.cpus,
  cpus: () => Array.from({ length: info.cpus }, () => ({ model: "", speed: 0, times: { user: 0, nice: 0, sys: 0, idle: 0, irq: 0 } })),
  networkInterfaces: () => ({}),
  userInfo: () => ({ username: info.env.USER ?? info.env.LOGNAME ?? "", uid: 1000, gid: 1000, shell: info.env.SHELL ?? null, homedir: home }),
  constants: Object.freeze({ signals: Object.freeze({ SIGINT: 2, SIGTERM: 15, SIGKILL: 9 }), errno: Object.freeze({}) }),
};
if (info.platform === "macos") os.platform = () => "darwin";
module.exports = os;

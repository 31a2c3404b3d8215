// The built-in `node:child_process`: spawn, exec and execFile (and their sync forms) on the
// host's `exec` — the deny list, the permission rules of Bash (a shell command is judged as
// the same Bash command; a program with arguments as its quoted command line), approvals, and
// the process helper (clean environment, timeout, output cap, OS sandbox). Output arrives when
// the program ends, not as it is written.
const { host } = globalThis.__toolhost;
const { Buffer } = require("node:buffer");
const EventEmitter = require("node:events");
const { promisify } = require("node:util");

// Only what differs from the clean environment is sent (and shown to the rules).
const extraEnvironment = (env) => {
  if (!env) return {};
  const extra = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && process.env[name] !== String(value)) extra[name] = String(value);
  }
  return extra;
};
const requestOf = (command, args, options = {}, shell = Boolean(options.shell)) => ({
  command: String(command),
  args: (args || []).map(String),
  cwd: options.cwd === undefined ? undefined : String(options.cwd),
  timeout: options.timeout,
  env: extraEnvironment(options.env),
  input: options.input === undefined ? undefined : Buffer.from(options.input).toString(),
  shell,
});
const settle = (answer) => {
  const result = JSON.parse(answer);
  if (result.error !== undefined) {
    const error = new Error(result.error);
    error.code = "EACCES";
    throw error;
  }
  return result.ok;
};
const run = async (request, signal) => {
  if (signal && signal.aborted) return { stdout: "", stderr: "", code: null, killed: true };
  const id = host.execId();
  const onAbort = () => host.execCancel(id);
  if (signal) signal.addEventListener("abort", onAbort);
  try {
    return settle(await host.exec(id, JSON.stringify(request)));
  } finally {
    if (signal) signal.removeEventListener("abort", onAbort);
  }
};
const decode = (text, encoding) => (encoding && encoding !== "buffer" ? text : Buffer.from(text));
const commandError = (shown, outcome) => {
  const error = new Error(`Command failed: ${shown}${outcome.stderr ? `\n${outcome.stderr}` : ""}`);
  error.code = outcome.code;
  error.status = outcome.code;
  error.killed = outcome.killed;
  error.signal = outcome.killed ? "SIGTERM" : null;
  error.cmd = shown;
  error.stdout = outcome.stdout;
  error.stderr = outcome.stderr;
  return error;
};

class ChildProcess extends EventEmitter {
  constructor(request, options) {
    super();
    this.pid = undefined;
    this.exitCode = null;
    this.signalCode = null;
    this.killed = false;
    this.stdout = new EventEmitter();
    this.stderr = new EventEmitter();
    this.stdout.setEncoding = this.stderr.setEncoding = function () { return this; };
    const input = [];
    this.stdin = { write: (chunk) => { input.push(String(chunk)); return true; }, end: (chunk) => { if (chunk !== undefined) input.push(String(chunk)); }, on() { return this; } };
    this.#controller = new AbortController();
    if (options && options.signal) options.signal.addEventListener("abort", () => this.kill(), { once: true });
    // Started after the current job, so that writes to stdin made right after spawn count.
    queueMicrotask(() => {
      const full = input.length > 0 ? { ...request, input: input.join("") } : request;
      run(full, this.#controller.signal).then((outcome) => {
        const encoding = options && options.encoding;
        if (outcome.stdout) this.stdout.emit("data", decode(outcome.stdout, encoding));
        if (outcome.stderr) this.stderr.emit("data", decode(outcome.stderr, encoding));
        this.stdout.emit("end");
        this.stderr.emit("end");
        this.exitCode = outcome.code;
        this.signalCode = outcome.killed ? "SIGTERM" : null;
        this.emit("exit", outcome.code, this.signalCode);
        this.emit("close", outcome.code, this.signalCode);
      }, (error) => {
        this.emit("error", error);
        this.emit("close", null, null);
      });
    });
  }
  #controller;
  kill() { this.killed = true; this.#controller.abort(); return true; }
  unref() { return this; }
  ref() { return this; }
  disconnect() {}
}

function spawn(command, args, options) {
  if (!Array.isArray(args)) { options = args; args = []; }
  return new ChildProcess(requestOf(command, args, options), options);
}
function execFile(file, args, options, callback) {
  if (typeof args === "function") { callback = args; args = []; options = {}; }
  else if (!Array.isArray(args)) { callback = options; options = args; args = []; }
  if (typeof options === "function") { callback = options; options = {}; }
  return finish(new ChildProcess(requestOf(file, args, options), options), [file, ...(args || [])].join(" "), options, callback);
}
function exec(command, options, callback) {
  if (typeof options === "function") { callback = options; options = {}; }
  return finish(new ChildProcess(requestOf(command, [], options, true), options), command, options, callback);
}
function finish(child, shown, options, callback) {
  let stdout = "", stderr = "";
  child.stdout.on("data", (chunk) => { stdout += chunk; });
  child.stderr.on("data", (chunk) => { stderr += chunk; });
  child.on("close", (code) => {
    if (!callback) return;
    // exec and execFile answer text unless asked for buffers (as in Node).
    const encoding = (options && options.encoding) || "utf8";
    const out = decode(stdout, encoding), err = decode(stderr, encoding);
    if (code === 0) callback(null, out, err);
    else callback(commandError(shown, { code, stdout: out, stderr: err, killed: child.killed }), out, err);
  });
  child.on("error", (error) => { if (callback) callback(error, "", ""); });
  return child;
}
const promised = (start) => (...args) => new Promise((resolve, reject) => {
  start(...args, (error, stdout, stderr) => (error ? reject(error) : resolve({ stdout, stderr })));
});
exec[promisify.custom] = promised(exec);
execFile[promisify.custom] = promised(execFile);

const runSync = (request) => settle(host.execSync(JSON.stringify(request)));
function spawnSync(command, args, options) {
  if (!Array.isArray(args)) { options = args; args = []; }
  try {
    const outcome = runSync(requestOf(command, args, options));
    const encoding = options && options.encoding;
    const stdout = decode(outcome.stdout, encoding), stderr = decode(outcome.stderr, encoding);
    return { pid: 0, status: outcome.code, signal: outcome.killed ? "SIGTERM" : null, stdout, stderr, output: [null, stdout, stderr] };
  } catch (error) {
    return { pid: 0, status: null, signal: null, stdout: null, stderr: null, output: null, error };
  }
}
const syncOutput = (request, shown, options) => {
  const outcome = runSync(request);
  if (outcome.code !== 0) throw commandError(shown, outcome);
  return decode(outcome.stdout, options && options.encoding);
};
const execSync = (command, options) => syncOutput(requestOf(command, [], options, true), command, options);
const execFileSync = (file, args, options) => {
  if (!Array.isArray(args)) { options = args; args = []; }
  return syncOutput(requestOf(file, args, options), [file, ...args].join(" "), options);
};
const unavailable = (name) => () => {
  throw new Error(`child_process.${name} is not available to custom tools (spawn, exec, execFile and their sync forms are)`);
};
module.exports = { spawn, exec, execFile, spawnSync, execSync, execFileSync, ChildProcess, fork: unavailable("fork") };

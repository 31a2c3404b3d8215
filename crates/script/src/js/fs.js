// The built-in `node:fs` (and `node:fs/promises` as its `promises`): every call goes to the
// host — the permission rules first (as Read, ListDir or Write would be judged), then the
// workspace rules (paths outside the workspace are refused). Sync, callback and promise forms
// share one path; the sync forms block the tool until the host answers.
const { host } = globalThis.__toolhost;
const { Buffer } = require("node:buffer");

const pathOf = (path) => {
  if (path && typeof path === "object" && typeof path.href === "string" && path.protocol === "file:") return decodeURIComponent(path.pathname);
  if (path instanceof Uint8Array) return Buffer.from(path).toString();
  if (typeof path !== "string") throw new TypeError(`The "path" argument must be a string, a Buffer or a file URL; got ${typeof path}`);
  return path;
};
const encodingOf = (options) => (typeof options === "string" ? options : options && options.encoding) || null;
const failure = (answer, op, path) => {
  const error = new Error(answer.error);
  if (answer.code) error.code = answer.code;
  error.syscall = op;
  error.path = path;
  return error;
};
const open = (answer, request) => {
  const result = JSON.parse(answer);
  if (result.error !== undefined) throw failure(result, request.op, request.path);
  return result.ok;
};
const call = async (request) => open(await host.fsCall(JSON.stringify(request)), request);
const callSync = (request) => open(host.fsCallSync(JSON.stringify(request)), request);

// Each operation once, as a request and what to make of the answer.
const payload = (data, options) => {
  if (typeof data === "string") {
    const encoding = encodingOf(options) || "utf8";
    return encoding === "utf8" || encoding === "utf-8" ? { data, encoding: "utf8" } : { data: Buffer.from(data, encoding).toString("base64"), encoding: "base64" };
  }
  if (ArrayBuffer.isView(data)) return { data: Buffer.from(data).toString("base64"), encoding: "base64" };
  return { data: String(data), encoding: "utf8" };
};
const readAnswer = (options) => (value) => {
  const encoding = encodingOf(options);
  const bytes = Buffer.from(value, "base64");
  return encoding ? bytes.toString(encoding) : bytes;
};
const readRequest = (path, options) => {
  const encoding = encodingOf(options);
  return { op: "read", path: pathOf(path), encoding: encoding === "utf8" || encoding === "utf-8" ? "utf8" : "base64" };
};
const dirent = (entry) => ({
  name: entry.name,
  isFile: () => entry.kind === "file",
  isDirectory: () => entry.kind === "directory",
  isSymbolicLink: () => entry.kind === "symlink",
  isFIFO: () => false,
  isSocket: () => false,
  isBlockDevice: () => false,
  isCharacterDevice: () => false,
});
const stats = (stat) => {
  const epoch = new Date(0);
  return {
    size: stat.size,
    mode: stat.kind === "directory" ? 0o40755 : 0o100644,
    mtime: epoch, atime: epoch, ctime: epoch, birthtime: epoch,
    mtimeMs: 0, atimeMs: 0, ctimeMs: 0, birthtimeMs: 0,
    ...dirent({ name: "", kind: stat.kind }),
  };
};

const operations = {
  readFile: (path, options) => [readRequest(path, options), (value) => (readRequest(path, options).encoding === "utf8" ? value : readAnswer(options)(value))],
  writeFile: (path, data, options) => [{ op: "write", path: pathOf(path), ...payload(data, options) }, () => undefined],
  readdir: (path, options) => [{ op: "list", path: pathOf(path) }, (entries) => (options && options.withFileTypes ? entries.map(dirent) : entries.map((entry) => entry.name))],
  stat: (path) => [{ op: "stat", path: pathOf(path) }, stats],
  mkdir: (path, options) => [{ op: "mkdir", path: pathOf(path), recursive: Boolean(options && options.recursive) }, () => undefined],
  rm: (path, options) => [{ op: "remove", path: pathOf(path), recursive: Boolean(options && options.recursive) }, () => undefined],
  rename: (from, to) => [{ op: "rename", path: pathOf(from), to: pathOf(to) }, () => undefined],
};
operations.lstat = operations.stat;
operations.unlink = (path) => operations.rm(path);
operations.rmdir = (path, options) => operations.rm(path, options);
operations.access = (path) => [{ op: "stat", path: pathOf(path) }, () => undefined];

const promises = {};
const sync = {};
for (const [name, make] of Object.entries(operations)) {
  promises[name] = async (...args) => { const [request, then] = make(...args); return then(await call(request)); };
  sync[`${name}Sync`] = (...args) => { const [request, then] = make(...args); return then(callSync(request)); };
}
// `rm` with `force` ignores a missing path; `mkdir` with `recursive` an existing folder.
const tolerant = (run, codes) => (...args) => run(...args).catch((error) => { if (codes(args).includes(error.code)) return undefined; throw error; });
const tolerantSync = (run, codes) => (...args) => { try { return run(...args); } catch (error) { if (codes(args).includes(error.code)) return undefined; throw error; } };
const rmCodes = ([, options]) => (options && options.force ? ["ENOENT"] : []);
// A host that cannot create folders (ENOSYS) still creates them when a file is written into them.
const mkdirCodes = ([, options]) => (options && options.recursive ? ["EEXIST", "ENOSYS"] : []);
promises.rm = tolerant(promises.rm, rmCodes);
sync.rmSync = tolerantSync(sync.rmSync, rmCodes);
promises.mkdir = tolerant(promises.mkdir, mkdirCodes);
sync.mkdirSync = tolerantSync(sync.mkdirSync, mkdirCodes);

// `mkdtemp(prefix)`: the prefix and six random characters, created as a folder; its path.
const TEMP_CHARACTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const tempName = (prefix) => {
  let name = pathOf(prefix);
  for (const byte of require("node:crypto").randomBytes(6)) name += TEMP_CHARACTERS[byte % TEMP_CHARACTERS.length];
  return name;
};
promises.mkdtemp = async (prefix) => { const path = tempName(prefix); await promises.mkdir(path, { recursive: true }); return path; };
sync.mkdtempSync = (prefix) => { const path = tempName(prefix); sync.mkdirSync(path, { recursive: true }); return path; };
promises.appendFile = async (path, data, options) => {
  let previous = Buffer.alloc(0);
  try { previous = await promises.readFile(path); } catch (error) { if (error.code !== "ENOENT") throw error; }
  const added = typeof data === "string" ? Buffer.from(data, encodingOf(options) || "utf8") : Buffer.from(data);
  await promises.writeFile(path, Buffer.concat([previous, added]));
};
sync.appendFileSync = (path, data, options) => {
  let previous = Buffer.alloc(0);
  try { previous = sync.readFileSync(path); } catch (error) { if (error.code !== "ENOENT") throw error; }
  const added = typeof data === "string" ? Buffer.from(data, encodingOf(options) || "utf8") : Buffer.from(data);
  sync.writeFileSync(path, Buffer.concat([previous, added]));
};
promises.copyFile = async (from, to) => promises.writeFile(to, await promises.readFile(from));
sync.copyFileSync = (from, to) => sync.writeFileSync(to, sync.readFileSync(from));
promises.realpath = async (path) => require("node:path").resolve(pathOf(path));
sync.realpathSync = (path) => require("node:path").resolve(pathOf(path));
sync.existsSync = (path) => {
  try { sync.statSync(path); return true; } catch { return false; }
};

// `createReadStream(path)`: the whole file, read through the same rules as `readFile`, given
// as one `data` chunk and `end` (and as an async iterator of that chunk), so that stream
// consumers such as `readline` work; files stay within the read limits of a whole read.
function createReadStream(path, options) {
  const EventEmitter = require("node:events");
  const stream = new EventEmitter();
  const encoding = encodingOf(options);
  const read = promises.readFile(path, encoding ? { encoding } : undefined);
  stream.path = pathOf(path);
  stream.setEncoding = () => stream;
  stream.pipe = (target) => { stream.on("data", (chunk) => target.write(chunk)); stream.on("end", () => typeof target.end === "function" && target.end()); return target; };
  stream.close = () => {};
  stream.destroy = () => {};
  // Listeners attach after the call returns: the file is emitted on a later turn.
  read.then((content) => setTimeout(() => { stream.emit("open"); stream.emit("data", content); stream.emit("end"); stream.emit("close"); }, 0), (error) => setTimeout(() => stream.emit("error", error), 0));
  stream[Symbol.asyncIterator] = async function* () { yield await read; };
  return stream;
}
// `fs.watch(path, options, listener)`: the host polls the path (through the same rules as
// reading it) and tells the watcher `change` (eventType, filename) as Node's does; `close()`
// stops it, and so does the end of the session. A path the rules refuse emits `error`.
const watchers = new Map();
function watch(path, options, listener) {
  if (typeof options === "function") [listener, options] = [options, {}];
  if (typeof options === "string") options = { encoding: options };
  const EventEmitter = require("node:events");
  const watcher = new EventEmitter();
  if (typeof listener === "function") watcher.on("change", listener);
  const id = host.watchStart(pathOf(path), Boolean(options && options.recursive));
  watchers.set(id, watcher);
  watcher.close = () => {
    if (!watchers.delete(id)) return;
    host.watchStop(id);
    watcher.emit("close");
  };
  // The host's poll never keeps the program running, so there is nothing to (un)reference.
  watcher.ref = () => watcher;
  watcher.unref = () => watcher;
  if (options && options.signal) options.signal.addEventListener("abort", () => watcher.close());
  return watcher;
}
// What the host's poll found for watcher `id`: `{changes: [{eventType, filename}]}` or
// `{error}`.
const deliverWatch = (id, found) => {
  const watcher = watchers.get(id);
  if (!watcher) return;
  if (found.error !== undefined) {
    watchers.delete(id);
    const error = new Error(found.error);
    error.code = "EACCES";
    watcher.emit("error", error);
    return;
  }
  for (const { eventType, filename } of found.changes) watcher.emit("change", eventType, filename);
};
const unavailable = (name, instead) => () => {
  throw new Error(`fs.${name} is not available to custom tools (${instead})`);
};
const callbacks = {};
for (const [name, run] of Object.entries(promises)) {
  callbacks[name] = (...args) => {
    const callback = typeof args[args.length - 1] === "function" ? args.pop() : null;
    if (!callback) throw new TypeError(`fs.${name} needs a callback as its last argument (or use fs.promises.${name})`);
    run(...args).then((value) => callback(null, value), (error) => callback(error));
  };
}
callbacks.exists = (path, callback) => { promises.stat(path).then(() => callback(true), () => callback(false)); };

const constants = Object.freeze({ F_OK: 0, R_OK: 4, W_OK: 2, X_OK: 1 });
promises.constants = constants;
module.exports = {
  ...callbacks,
  ...sync,
  promises,
  constants,
  ...constants,
  createReadStream,
  createWriteStream: unavailable("createWriteStream", "write the whole file with writeFile"),
  watch,
  watchFile: unavailable("watchFile", "use fs.watch"),
  [Symbol.for("toolhost.deliverWatch")]: deliverWatch,
  openSync: unavailable("openSync", "use readFileSync or writeFileSync"),
  open: unavailable("open", "use readFile or writeFile"),
};

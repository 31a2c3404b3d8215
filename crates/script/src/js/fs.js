// The built-in `node:fs/promises`: reads and writes go through the host's file system, which
// applies the workspace rules (paths outside the workspace are refused).
const { host } = globalThis.__toolhost;

const settle = (json) => {
  const result = JSON.parse(json);
  if (result.error !== undefined) {
    const error = new Error(result.error);
    if (result.code) error.code = result.code;
    throw error;
  }
  return result.ok;
};
const encodingOf = (options) => (typeof options === "string" ? options : options && options.encoding);

export async function readFile(path, options) {
  const encoding = encodingOf(options);
  const bytes = settle(await host.fsRead(String(path), encoding ? "utf8" : "bytes"));
  return encoding ? bytes : new Uint8Array(bytes);
}
export async function writeFile(path, data) {
  const text = typeof data === "string" ? data : new TextDecoder().decode(data);
  settle(await host.fsWrite(String(path), text));
}
export async function appendFile(path, data) {
  let previous = "";
  try { previous = await readFile(path, "utf8"); } catch (error) { if (error.code !== "ENOENT") throw error; }
  const text = typeof data === "string" ? data : new TextDecoder().decode(data);
  await writeFile(path, previous + text);
}
export async function readdir(path, options) {
  const entries = settle(await host.fsList(String(path)));
  if (options && options.withFileTypes) {
    return entries.map((entry) => ({
      name: entry.name,
      isFile: () => entry.kind === "file",
      isDirectory: () => entry.kind === "directory",
      isSymbolicLink: () => entry.kind === "symlink",
    }));
  }
  return entries.map((entry) => entry.name);
}
const fs = { readFile, writeFile, appendFile, readdir };
export default fs;

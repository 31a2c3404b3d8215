// The built-in `node:path`: POSIX paths, as Node's `path.posix`.
const sep = "/";
const delimiter = ":";

function normalize(path) {
  if (path.length === 0) return ".";
  const absolute = path.startsWith("/");
  const trailing = path.endsWith("/");
  const parts = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length > 0 && parts[parts.length - 1] !== "..") parts.pop();
      else if (!absolute) parts.push("..");
    } else parts.push(part);
  }
  let out = (absolute ? "/" : "") + parts.join("/");
  if (out === "") out = absolute ? "/" : ".";
  if (trailing && out !== "/") out += "/";
  return out;
}
function join(...parts) {
  const joined = parts.filter((part) => part !== "").join("/");
  return joined === "" ? "." : normalize(joined);
}
function resolve(...parts) {
  let resolved = "";
  for (let i = parts.length - 1; i >= 0 && !resolved.startsWith("/"); i--) {
    if (parts[i]) resolved = parts[i] + (resolved ? "/" + resolved : "");
  }
  if (!resolved.startsWith("/")) resolved = process.cwd() + (resolved ? "/" + resolved : "");
  const out = normalize(resolved);
  return out.length > 1 && out.endsWith("/") ? out.slice(0, -1) : out;
}
function isAbsolute(path) { return path.startsWith("/"); }
function dirname(path) {
  if (path.length === 0) return ".";
  const trimmed = path.length > 1 ? path.replace(/\/+$/, "") : path;
  const index = trimmed.lastIndexOf("/");
  if (index === -1) return ".";
  if (index === 0) return "/";
  return trimmed.slice(0, index);
}
function basename(path, suffix) {
  const trimmed = path.length > 1 ? path.replace(/\/+$/, "") : path;
  let base = trimmed.slice(trimmed.lastIndexOf("/") + 1);
  if (suffix && base.endsWith(suffix) && base !== suffix) base = base.slice(0, -suffix.length);
  return base;
}
function extname(path) {
  const base = basename(path);
  const index = base.lastIndexOf(".");
  return index <= 0 ? "" : base.slice(index);
}
function relative(from, to) {
  const a = resolve(from).split("/").filter(Boolean);
  const b = resolve(to).split("/").filter(Boolean);
  let common = 0;
  while (common < a.length && common < b.length && a[common] === b[common]) common++;
  return [...Array(a.length - common).fill(".."), ...b.slice(common)].join("/");
}
function parse(path) {
  const root = path.startsWith("/") ? "/" : "";
  const base = basename(path);
  const ext = extname(path);
  const dir = path.includes("/") ? dirname(path) : "";
  return { root, dir, base, ext, name: ext ? base.slice(0, -ext.length) : base };
}
function format({ dir, root, base, name, ext }) {
  const file = base ?? `${name ?? ""}${ext ?? ""}`;
  const folder = dir ?? root ?? "";
  if (!folder) return file;
  return folder === root ? `${folder}${file}` : `${folder}/${file}`;
}
const path = { sep, delimiter, normalize, join, resolve, isAbsolute, dirname, basename, extname, relative, parse, format };
path.posix = path;
module.exports = path;

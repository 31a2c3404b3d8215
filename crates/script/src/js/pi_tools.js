// pi's built-in tool factories (`createReadTool(cwd)`, `createBashTool(cwd)`, …), for
// extensions that wrap or re-render pi's own tools: each gives a tool in pi's shape (name,
// label, description, parameters, `execute(toolCallId, params, signal, onUpdate)`) running on
// `node:fs` and `node:child_process`, so its files and processes are judged by the permission
// rules of Read, ListDir, Write and Bash like any extension's. pi's `operations` option (a remote
// file system) is not offered: the tools work on this machine's workspace.
const { Type } = require("@sinclair/typebox");
const fs = require("node:fs").promises;
const path = require("node:path");
const { exec, execFile } = require("node:child_process");

const MAX_LINES = 2000;
const MAX_BYTES = 50 * 1024;
const text = (value, details) => ({ content: [{ type: "text", text: value }], details });
const under = (cwd, file) => path.resolve(cwd, String(file ?? ".").replace(/^@/, ""));
const checkOptions = (name, options) => {
  if (options && options.operations) throw new Error(`${name}: the 'operations' option (a remote file system) is not available in toolhost; the tool works on the local workspace`);
};
const run = (runner, ...args) => new Promise((resolve) => {
  runner(...args, (error, stdout, stderr) => resolve({ code: error ? (typeof error.code === "number" ? error.code : 1) : 0, stdout: String(stdout ?? ""), stderr: String(stderr ?? "") }));
});
const tail = (output) => {
  const { truncateTail } = require("@mariozechner/pi-coding-agent");
  const cut = truncateTail(output, { maxLines: MAX_LINES, maxBytes: MAX_BYTES });
  return cut.truncated ? `${cut.content}\n\n[Output truncated: showing the last ${cut.outputLines} of ${cut.totalLines} lines]` : cut.content;
};

function createReadTool(cwd = process.cwd(), options) {
  checkOptions("createReadTool", options);
  return {
    name: "read",
    label: "read",
    description: `Read the contents of a file. Output is truncated to ${MAX_LINES} lines or ${MAX_BYTES / 1024}KB (whichever is hit first). Use offset/limit for large files.`,
    parameters: Type.Object({
      path: Type.String({ description: "Path to the file to read (relative or absolute)" }),
      offset: Type.Optional(Type.Number({ description: "Line number to start reading from (1-indexed)" })),
      limit: Type.Optional(Type.Number({ description: "Maximum number of lines to read" })),
    }),
    async execute(_toolCallId, params) {
      const { truncateHead } = require("@mariozechner/pi-coding-agent");
      const lines = (await fs.readFile(under(cwd, params.path), "utf8")).split("\n");
      const start = Math.max(1, Math.floor(params.offset ?? 1));
      if (start > lines.length) throw new Error(`Offset ${start} is beyond end of file (${lines.length} lines total)`);
      const end = params.limit === undefined ? lines.length : Math.min(lines.length, start - 1 + Math.floor(params.limit));
      const cut = truncateHead(lines.slice(start - 1, end).join("\n"), { maxLines: MAX_LINES, maxBytes: MAX_BYTES });
      const shownEnd = start - 1 + cut.outputLines;
      const more = shownEnd < lines.length ? `\n\n[Showing lines ${start}-${shownEnd} of ${lines.length}. Use offset=${shownEnd + 1} to continue.]` : "";
      return text(cut.content + more, { truncation: cut.truncated ? cut : undefined });
    },
  };
}

function createBashTool(cwd = process.cwd(), options) {
  checkOptions("createBashTool", options);
  const spawnHook = options && typeof options.spawnHook === "function" ? options.spawnHook : null;
  return {
    name: "bash",
    label: "bash",
    description: `Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to the last ${MAX_LINES} lines or ${MAX_BYTES / 1024}KB.`,
    parameters: Type.Object({
      command: Type.String({ description: "Bash command to execute" }),
      timeout: Type.Optional(Type.Number({ description: "Timeout in seconds (optional, no default timeout)" })),
    }),
    async execute(_toolCallId, params, signal) {
      let spawn = { command: String(params.command), cwd, env: { ...process.env } };
      if (spawnHook) spawn = { ...spawn, ...(spawnHook(spawn) ?? {}) };
      const timeout = params.timeout === undefined ? undefined : params.timeout * 1000;
      const outcome = await run(exec, spawn.command, { cwd: spawn.cwd, env: spawn.env, timeout, signal });
      const output = tail(`${outcome.stdout}${outcome.stderr}`) || "(no output)";
      if (outcome.code !== 0) throw new Error(`${output}\n\nCommand exited with code ${outcome.code}`);
      return text(output, {});
    },
  };
}

function createWriteTool(cwd = process.cwd(), options) {
  checkOptions("createWriteTool", options);
  return {
    name: "write",
    label: "write",
    description: "Write content to a file. Creates the file if it doesn't exist, overwrites if it does. Automatically creates parent directories.",
    parameters: Type.Object({
      path: Type.String({ description: "Path to the file to write (relative or absolute)" }),
      content: Type.String({ description: "Content to write to the file" }),
    }),
    async execute(_toolCallId, params) {
      const file = under(cwd, params.path);
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.writeFile(file, String(params.content));
      return text(`Successfully wrote ${new TextEncoder().encode(String(params.content)).length} bytes to ${params.path}`, {});
    },
  };
}

function createEditTool(cwd = process.cwd(), options) {
  checkOptions("createEditTool", options);
  return {
    name: "edit",
    label: "edit",
    description: "Edit a file by replacing exact text. The oldText must match exactly one place in the file.",
    parameters: Type.Object({
      path: Type.String({ description: "Path to the file to edit (relative or absolute)" }),
      oldText: Type.String({ description: "Exact text to find and replace (must match exactly)" }),
      newText: Type.String({ description: "New text to replace the old text with" }),
    }),
    async execute(_toolCallId, params) {
      const file = under(cwd, params.path);
      const content = await fs.readFile(file, "utf8");
      const count = content.split(params.oldText).length - 1;
      if (count === 0) throw new Error(`Could not find the exact text in ${params.path}. The old text must match exactly including all whitespace and newlines.`);
      if (count > 1) throw new Error(`Found ${count} occurrences of the text in ${params.path}. The text must be unique. Please provide more context to make it unique.`);
      await fs.writeFile(file, content.replace(params.oldText, () => params.newText));
      return text(`Successfully replaced text in ${params.path}.`, {});
    },
  };
}

function createLsTool(cwd = process.cwd(), options) {
  checkOptions("createLsTool", options);
  return {
    name: "ls",
    label: "ls",
    description: "List directory contents, sorted alphabetically, with '/' after folders.",
    parameters: Type.Object({
      path: Type.Optional(Type.String({ description: "Directory to list (default: current directory)" })),
      limit: Type.Optional(Type.Number({ description: "Maximum number of entries to return (default: 500)" })),
    }),
    async execute(_toolCallId, params) {
      const entries = await fs.readdir(under(cwd, params.path), { withFileTypes: true });
      const names = entries.map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name)).sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
      const limit = Math.floor(params.limit ?? 500);
      const shown = names.slice(0, limit);
      const more = names.length > limit ? `\n\n[${limit} entries limit reached]` : "";
      return text(shown.length === 0 ? "(empty directory)" : shown.join("\n") + more, {});
    },
  };
}

function createGrepTool(cwd = process.cwd(), options) {
  checkOptions("createGrepTool", options);
  return {
    name: "grep",
    label: "grep",
    description: "Search file contents for a pattern (ripgrep). Returns matching lines with file paths and line numbers.",
    parameters: Type.Object({
      pattern: Type.String({ description: "Search pattern (regex or literal string)" }),
      path: Type.Optional(Type.String({ description: "Directory or file to search (default: current directory)" })),
      glob: Type.Optional(Type.String({ description: "Filter files by glob pattern, e.g. '*.ts'" })),
      ignoreCase: Type.Optional(Type.Boolean({ description: "Case-insensitive search" })),
      literal: Type.Optional(Type.Boolean({ description: "Treat pattern as literal string instead of regex" })),
      context: Type.Optional(Type.Number({ description: "Lines to show before and after each match" })),
      limit: Type.Optional(Type.Number({ description: "Maximum number of matches to return (default: 100)" })),
    }),
    async execute(_toolCallId, params, signal) {
      const args = ["--line-number", "--no-heading", "--color=never", "--max-count", String(Math.floor(params.limit ?? 100))];
      if (params.ignoreCase) args.push("--ignore-case");
      if (params.literal) args.push("--fixed-strings");
      if (params.context) args.push("--context", String(Math.floor(params.context)));
      if (params.glob) args.push("--glob", String(params.glob));
      args.push("--", String(params.pattern), params.path === undefined ? "." : String(params.path));
      const outcome = await run(execFile, "rg", args, { cwd, signal });
      if (outcome.code > 1) throw new Error(outcome.stderr || `rg exited with code ${outcome.code}`);
      return text(outcome.code === 1 ? "No matches found" : tail(outcome.stdout), {});
    },
  };
}

// `**` any folders, `*` and `?` within a name, `{a,b}` alternatives.
const globPattern = (glob) => new RegExp(`^${String(glob).replace(/[.+^$()|[\]\\]/g, "\\$&").replace(/\{([^}]*)\}/g, (_, list) => `(${list.split(",").join("|")})`).replace(/\*\*\//g, "\u0000").replace(/\*\*/g, ".*").replace(/\*/g, "[^/]*").replace(/\?/g, "[^/]").replace(/\u0000/g, "(.*/)?")}$`);

function createFindTool(cwd = process.cwd(), options) {
  checkOptions("createFindTool", options);
  return {
    name: "find",
    label: "find",
    description: "Find files by glob pattern, e.g. '*.ts' or 'src/**/*.json'. Skips node_modules and .git.",
    parameters: Type.Object({
      pattern: Type.String({ description: "Glob pattern to match files, e.g. '*.ts', '**/*.json'" }),
      path: Type.Optional(Type.String({ description: "Directory to search in (default: current directory)" })),
      limit: Type.Optional(Type.Number({ description: "Maximum number of results (default: 1000)" })),
    }),
    async execute(_toolCallId, params) {
      const root = under(cwd, params.path);
      const pattern = globPattern(params.pattern.includes("/") ? params.pattern : `**/${params.pattern}`);
      const limit = Math.floor(params.limit ?? 1000);
      const found = [];
      const walk = async (folder, prefix) => {
        for (const entry of await fs.readdir(folder, { withFileTypes: true })) {
          if (found.length >= limit) return;
          if (entry.name === "node_modules" || entry.name === ".git") continue;
          const relative = `${prefix}${entry.name}`;
          if (entry.isDirectory()) await walk(path.join(folder, entry.name), `${relative}/`);
          else if (pattern.test(relative)) found.push(relative);
        }
      };
      await walk(root, "");
      return text(found.length === 0 ? "No files found matching pattern" : found.join("\n"), {});
    },
  };
}

const createCodingTools = (cwd, options) => [createReadTool(cwd, options), createBashTool(cwd, options), createEditTool(cwd, options), createWriteTool(cwd, options)];
const createReadOnlyTools = (cwd, options) => [createReadTool(cwd, options), createGrepTool(cwd, options), createFindTool(cwd, options), createLsTool(cwd, options)];

module.exports = { createReadTool, createBashTool, createWriteTool, createEditTool, createLsTool, createGrepTool, createFindTool, createCodingTools, createReadOnlyTools };

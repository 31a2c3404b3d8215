// The official MCP TypeScript SDK as a client of the real `toolhost serve`, over stdio or HTTP.
//
// Usage: node client_test.mjs TOOLHOST_BINARY {stdio|http}
//
// Checks, each printed as `ok: ...` (the first failure throws and exits non-zero): the
// handshake, the tool list, a call of every filesystem tool, approvals through elicitation
// (and the refusal without it), bad arguments, a path outside the workspace, progress
// notifications, and cancellation killing the command's processes. Besides tools: a slash
// command as a prompt, a workspace file as a resource (a denied one neither listed nor read),
// the templates and a completion.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [binary, transportName] = process.argv.slice(2);
const FS_TOOLS = ["Read", "Write", "Edit", "ListDir", "Glob", "Grep"];
// Every `toolhost serve` here refuses Read of this file.
const DENIED = "secret.txt";
const GLOBAL_FLAGS = ["--deny", `Read(./${DENIED})`];

function check(condition, what, detail = "") {
  assert.ok(condition, `FAILED: ${what}\n${typeof detail === "string" ? detail : JSON.stringify(detail)}`);
  console.log(`ok: ${what}`);
}

const textOf = (result) =>
  result.content.filter((block) => block.type === "text").map((block) => block.text).join("\n");

async function startHttpServer(workspace) {
  const server = spawn(binary, ["--workspace", workspace, ...GLOBAL_FLAGS, "serve", "--http", "0"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  const url = await new Promise((resolve, reject) => {
    let seen = "";
    server.stderr.on("data", (chunk) => {
      seen += chunk;
      const match = seen.match(/http:\/\/\S+/);
      if (match) resolve(match[0]);
    });
    server.on("exit", (code) => reject(new Error(`toolhost serve exited with ${code}: ${seen}`)));
  });
  return { server, url };
}

async function connect(workspace, url, confirm) {
  const confirmations = [];
  const client = new Client(
    { name: "toolhost-ts-test", version: "1.0.0" },
    { capabilities: confirm ? { elicitation: { form: {} } } : {} },
  );
  if (confirm) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      confirmations.push(request.params.message);
      return { action: "accept", content: {} };
    });
  }
  const transport =
    transportName === "stdio"
      ? new StdioClientTransport({ command: binary, args: ["--workspace", workspace, ...GLOBAL_FLAGS, "serve"], stderr: "inherit" })
      : new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  return { client, confirmations };
}

function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.split(")").pop().trim().split(" ")[0] !== "Z";
  } catch {
    return false;
  }
}

async function toolCalls(workspace, url) {
  const { client, confirmations } = await connect(workspace, url, true);
  const info = client.getServerVersion();
  check(info.name === "toolhost", `${transportName}: initialize names the server`, info);
  check(client.getServerCapabilities().tools?.listChanged === true, "tools.listChanged");

  const { tools } = await client.listTools();
  const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
  check(FS_TOOLS.every((name) => name in byName), "every filesystem tool is listed", Object.keys(byName));
  check(byName.Read.title === "Read file", "the label is the title", byName.Read);
  check(byName.Read.annotations?.readOnlyHint === true, "readOnlyHint", byName.Read.annotations);
  check(byName.Edit.annotations?.readOnlyHint === false, "Edit is not read-only");
  check(byName.Grep.inputSchema.required?.includes("pattern"), "inputSchema is the parameters schema");

  let result = await client.callTool({ name: "Write", arguments: { path: "a/b.txt", content: "alpha\nbeta\n" } });
  check(!result.isError, "Write runs once the user accepts", textOf(result));
  check(confirmations.length === 1 && confirmations[0].includes("Write"), "Write asked through elicitation", confirmations);
  result = await client.callTool({ name: "Read", arguments: { path: "a/b.txt" } });
  check(!result.isError && textOf(result).includes("alpha"), "Read returns the content", textOf(result));
  result = await client.callTool({ name: "Edit", arguments: { path: "a/b.txt", old_string: "beta", new_string: "gamma" } });
  check(!result.isError && readFileSync(join(workspace, "a/b.txt"), "utf8").includes("gamma"), "Edit changes the file");
  result = await client.callTool({ name: "ListDir", arguments: { path: "a" } });
  check(!result.isError && textOf(result).includes("b.txt"), "ListDir lists the file", textOf(result));
  result = await client.callTool({ name: "Glob", arguments: { pattern: "**/*.txt" } });
  check(!result.isError && textOf(result).includes("b.txt"), "Glob finds the file", textOf(result));
  result = await client.callTool({ name: "Grep", arguments: { pattern: "gamma" } });
  check(!result.isError && textOf(result).includes("b.txt"), "Grep finds the file", textOf(result));

  result = await client.callTool({ name: "Edit", arguments: { path: "a/b.txt" } });
  check(result.isError && textOf(result).includes("old_string"), "bad arguments: an isError result naming the parameter", textOf(result));
  result = await client.callTool({ name: "Read", arguments: { path: "../../etc/passwd" } });
  check(result.isError && !textOf(result).includes("root:"), "a path outside the workspace is refused", textOf(result));

  const progress = [];
  result = await client.callTool(
    { name: "Bash", arguments: { command: "for i in 1 2 3; do echo step$i; sleep 0.2; done" } },
    undefined,
    { onprogress: (update) => progress.push(update) },
  );
  check(!result.isError && textOf(result).includes("step3"), "Bash runs once accepted", textOf(result));
  check(progress.length >= 2, "updates arrive as notifications/progress", progress);
  check(progress.some((update) => update.message?.includes("step1")), "progress carries the output", progress);

  const controller = new AbortController();
  const pidFile = join(workspace, "sleep.pid");
  const call = client
    .callTool({ name: "Bash", arguments: { command: "sleep 60 & echo $! > sleep.pid; wait" } }, undefined, {
      signal: controller.signal,
    })
    .then(
      () => "finished",
      (error) => `aborted: ${error}`,
    );
  for (let i = 0; i < 200 && !(existsSync(pidFile) && readFileSync(pidFile, "utf8").trim()); i++) await sleep(50);
  const pid = Number(readFileSync(pidFile, "utf8").trim());
  controller.abort("test");
  check((await call).startsWith("aborted"), "the call is abandoned");
  for (let i = 0; i < 100 && alive(pid); i++) await sleep(50);
  check(!alive(pid), "notifications/cancelled kills the command's processes", pid);
  result = await client.callTool({ name: "Read", arguments: { path: "a/b.txt" } });
  check(!result.isError, "the session goes on after a cancellation");
  await client.close();

  const plain = await connect(workspace, url, false);
  result = await plain.client.callTool({ name: "Write", arguments: { path: "refused.txt", content: "x" } });
  check(result.isError && textOf(result).includes("--yes") && textOf(result).includes("--allow 'Write(/refused.txt)'"), "without elicitation the refusal says how to allow", textOf(result));
  check(!existsSync(join(workspace, "refused.txt")), "the refused call wrote nothing");
  await plain.client.close();
}

function writeCatalog(workspace) {
  mkdirSync(join(workspace, ".claude/commands"), { recursive: true });
  writeFileSync(join(workspace, ".claude/commands/explain.md"), "---\nargument-hint: [topic]\n---\nExplain $ARGUMENTS simply.\n");
  writeFileSync(join(workspace, "notes.md"), "# Notes\n");
  writeFileSync(join(workspace, DENIED), "the password\n");
}

async function promptsAndResources(workspace, url) {
  const { client } = await connect(workspace, url, true);
  const capabilities = client.getServerCapabilities();
  check(capabilities.prompts?.listChanged && capabilities.resources?.listChanged && capabilities.completions, "prompts, resources and completions are declared", capabilities);

  const { prompts } = await client.listPrompts();
  const explain = prompts.find((prompt) => prompt.name === "explain");
  check(explain?.arguments?.[0]?.name === "topic", "a slash command is a prompt whose argument the hint names", prompts);
  const got = await client.getPrompt({ name: "explain", arguments: { topic: "borrowing in Rust" } });
  check(got.messages[0].content.text.trim() === "Explain borrowing in Rust simply.", "prompts/get expands it", got);

  const root = realpathSync(workspace);
  const { resources } = await client.listResources();
  const uris = resources.map((resource) => resource.uri);
  check(uris.includes(`file://${root}/notes.md`), "a workspace file is a resource", uris);
  check(!uris.some((uri) => uri.includes(DENIED)), "a denied file is not listed", uris);
  const read = await client.readResource({ uri: `file://${root}/notes.md` });
  check(read.contents[0].text === "# Notes\n", "resources/read returns it", read);
  const refused = await client.readResource({ uri: `file://${root}/${DENIED}` }).then(
    () => "read",
    (error) => error.code,
  );
  check(refused === -32002, "a denied file cannot be read (-32002)", refused);

  const { resourceTemplates } = await client.listResourceTemplates();
  const template = resourceTemplates.find((t) => t.uriTemplate.startsWith("file://"));
  check(template?.uriTemplate === `file://${root}/{+path}`, "the workspace's template", resourceTemplates);
  const completed = await client.complete({ ref: { type: "ref/resource", uri: template.uriTemplate }, argument: { name: "path", value: "no" } });
  check(JSON.stringify(completed.completion.values) === JSON.stringify(["notes.md"]), "completion/complete of the path", completed);
  await client.close();
}

const workspace = mkdtempSync(join(tmpdir(), "toolhost-ts-"));
let http;
try {
  writeCatalog(workspace);
  if (transportName === "http") http = await startHttpServer(workspace);
  await toolCalls(workspace, http?.url);
  await promptsAndResources(workspace, http?.url);
  console.log(`typescript sdk over ${transportName}: all checks passed`);
} finally {
  http?.server.kill("SIGTERM");
  rmSync(workspace, { recursive: true, force: true });
}

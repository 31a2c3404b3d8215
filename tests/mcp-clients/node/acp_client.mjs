// The official ACP TypeScript SDK (@agentclientprotocol/sdk) as an editor driving the real
// `toolhost acp`, as crates/cli/tests/acp_sdk.rs scripts it (that test plays the model).
//
// Usage: node acp_client.mjs TOOLHOST_BINARY WORKSPACE first
//        node acp_client.mjs TOOLHOST_BINARY WORKSPACE load SESSION_ID
//        node acp_client.mjs TOOLHOST_BINARY WORKSPACE prompt TEXT
//        node acp_client.mjs TOOLHOST_BINARY WORKSPACE model VALUE
//
// `first`: initialize (with the fs capability: this client serves the files, and its buffer
// of notes.txt holds an unsaved line), session/new, a prompt with a resource link and an
// embedded resource (the model reads, edits, writes and runs a command; the client answers
// the permission requests: "allow always" for the Edit, "allow once" for the rest),
// session/set_mode, then a prompt whose command is slow, cancelled with session/cancel once
// it runs. `load`: initialize, session/load of SESSION_ID. `prompt`: initialize, session/new,
// a prompt of TEXT. `model`: initialize, session/new, session/set_config_option of the model
// to a value no one offers, then to VALUE, and a prompt.
//
// Prints one JSON object per line: everything the agent sent (`update`, `permission`,
// `read`, `write`) and every answer it gave (`response`, `error`), in the order they came;
// the Rust test checks them.

import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";

import { client, methods, ndJsonStream } from "@agentclientprotocol/sdk";

const [binary, workspace, phase, argument] = process.argv.slice(2);
const UNSAVED = "an unsaved line, only in the editor's buffer\n";

const print = (kind, payload) => console.log(JSON.stringify({ kind, payload }));

const agentProcess = spawn(binary, ["--workspace", workspace, "acp"], {
  stdio: ["pipe", "pipe", "inherit"],
});
const stream = ndJsonStream(Writable.toWeb(agentProcess.stdin), Readable.toWeb(agentProcess.stdout));

// Resolved when the slow command has been allowed (it runs from then on).
let slowCommandAllowed;
const slowCommandRuns = new Promise((resolve) => {
  slowCommandAllowed = resolve;
});

const editor = client({ name: "toolhost-acp-test" })
  .onNotification(methods.client.session.update, ({ params }) => {
    print("update", params);
  })
  .onRequest(methods.client.session.requestPermission, ({ params }) => {
    print("permission", params);
    const call = params.toolCall.toolCallId;
    if (call === "call-edit") {
      return { outcome: { outcome: "selected", optionId: "allow_always" } };
    }
    if (call === "call-slow") {
      setTimeout(slowCommandAllowed, 0);
    }
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  })
  .onRequest(methods.client.fs.readTextFile, ({ params }) => {
    print("read", params);
    const text = readFileSync(params.path, "utf8");
    return { content: params.path.endsWith("notes.txt") ? text + UNSAVED : text };
  })
  .onRequest(methods.client.fs.writeTextFile, ({ params }) => {
    print("write", params);
    writeFileSync(params.path, params.content);
    return {};
  });

async function ask(agent, method, params) {
  try {
    const response = await agent.request(method, params);
    print("response", { method, response });
    return response;
  } catch (error) {
    print("error", { method, code: error.code, message: error.message, data: error.data });
    return undefined;
  }
}

await editor.connectWith(stream, async (agent) => {
  await ask(agent, methods.agent.initialize, {
    protocolVersion: 1,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
    clientInfo: { name: "toolhost-acp-test", version: "1.0.0" },
  });
  if (phase === "load") {
    await ask(agent, methods.agent.session.load, { sessionId: argument, cwd: workspace, mcpServers: [] });
    return;
  }
  const created = await ask(agent, methods.agent.session.new, { cwd: workspace, mcpServers: [] });
  const id = created.sessionId;
  if (phase === "model") {
    const choose = (value) =>
      ask(agent, methods.agent.session.setConfigOption, { sessionId: id, configId: "model", value });
    await choose("nowhere/no-model");
    await choose(argument);
    await ask(agent, methods.agent.session.prompt, { sessionId: id, prompt: [{ type: "text", text: "Which model?" }] });
    return;
  }
  if (phase === "prompt") {
    await ask(agent, methods.agent.session.prompt, { sessionId: id, prompt: [{ type: "text", text: argument }] });
    return;
  }
  await ask(agent, methods.agent.session.prompt, {
    sessionId: id,
    prompt: [
      { type: "text", text: "Tidy up notes.txt, please." },
      { type: "resource_link", name: "notes.txt", uri: `file://${join(workspace, "notes.txt")}` },
      {
        type: "resource",
        resource: { uri: `file://${join(workspace, "style.md")}`, text: "Keep it short.", mimeType: "text/markdown" },
      },
    ],
  });
  await ask(agent, methods.agent.session.setMode, { sessionId: id, modeId: "acceptEdits" });
  const slowPrompt = ask(agent, methods.agent.session.prompt, {
    sessionId: id,
    prompt: [{ type: "text", text: "Now wait for the build." }],
  });
  await slowCommandRuns;
  // Long enough for the command to have started; the prompt must end well before it would.
  await sleep(500);
  await agent.notify(methods.agent.session.cancel, { sessionId: id });
  await slowPrompt;
});
agentProcess.stdin.end();
await new Promise((resolve) => agentProcess.on("exit", resolve));

// The official ACP TypeScript SDK (@agentclientprotocol/sdk) as an editor driving the real
// `toolhost acp`, as crates/cli/tests/acp_sdk.rs scripts it (that test plays the model).
//
// Usage: node acp_client.mjs TOOLHOST_BINARY WORKSPACE first
//        node acp_client.mjs TOOLHOST_BINARY WORKSPACE load SESSION_ID
//        node acp_client.mjs TOOLHOST_BINARY WORKSPACE prompt TEXT
//        node acp_client.mjs TOOLHOST_BINARY WORKSPACE model VALUE
//        node acp_client.mjs TOOLHOST_BINARY WORKSPACE terminal
//
// `first`: initialize (with the fs capability: this client serves the files, and its buffer
// of notes.txt holds an unsaved line), session/new, a prompt with a resource link and an
// embedded resource (the model reads, edits, writes and runs a command; the client answers
// the permission requests: "allow always" for the Edit, "allow once" for the rest),
// session/set_mode, then a prompt whose command is slow, cancelled with session/cancel once
// it runs. `load`: initialize, session/load of SESSION_ID. `prompt`: initialize, session/new,
// a prompt of TEXT. `model`: initialize, session/new, session/set_config_option of the model
// to a value no one offers, a prompt during whose command (`call-slow`, once allowed) the model
// is set to VALUE, and a second prompt. `terminal`: initialize with the
// terminal capability (this client runs the commands, in process groups of their own),
// session/new, a prompt, then a prompt whose command (`sleep 40`) is cancelled once its
// terminal exists; it ends when that terminal is released (or when the prompt ends without
// one).
//
// Prints one JSON object per line: everything the agent sent (`update`, `permission`,
// `read`, `write`, `terminal/…`) and every answer it gave (`response`, `error`), in the order they came;
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

// The terminals this client runs, by id.
const terminals = new Map();
// Resolved when the terminal of the command to cancel exists, then when it is released.
let slowTerminalCreated;
const slowTerminalExists = new Promise((resolve) => {
  slowTerminalCreated = resolve;
});
let slowTerminalReleased;
const slowTerminalGone = new Promise((resolve) => {
  slowTerminalReleased = resolve;
});

function createTerminal(params) {
  const id = `term-${terminals.size + 1}`;
  const env = { ...process.env };
  for (const variable of params.env ?? []) env[variable.name] = variable.value;
  const child = spawn(params.command, params.args ?? [], {
    cwd: params.cwd ?? workspace,
    env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const terminal = { child, output: "", truncated: false, exitStatus: undefined, running: true };
  const append = (chunk) => {
    terminal.output += chunk.toString();
    const limit = params.outputByteLimit;
    if (limit != null && Buffer.byteLength(terminal.output) > limit) {
      terminal.output = Buffer.from(terminal.output).subarray(-limit).toString();
      terminal.truncated = true;
    }
  };
  child.stdout.on("data", append);
  child.stderr.on("data", append);
  terminal.exited = new Promise((resolve) => {
    child.on("close", (exitCode, signal) => {
      terminal.running = false;
      terminal.exitStatus = { exitCode, signal };
      resolve(terminal.exitStatus);
    });
  });
  terminal.kill = () => {
    try {
      if (terminal.running) process.kill(-child.pid, "SIGKILL");
    } catch {
      // Ended meanwhile.
    }
  };
  terminals.set(id, terminal);
  if (params.args?.[1] === "sleep 40") {
    terminal.slow = true;
    setTimeout(slowTerminalCreated, 0);
  }
  return id;
}

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
  })
  .onRequest(methods.client.terminal.create, ({ params }) => {
    print("terminal/create", params);
    return { terminalId: createTerminal(params) };
  })
  .onRequest(methods.client.terminal.waitForExit, async ({ params }) => {
    print("terminal/wait_for_exit", params);
    return await terminals.get(params.terminalId).exited;
  })
  .onRequest(methods.client.terminal.kill, ({ params }) => {
    print("terminal/kill", params);
    terminals.get(params.terminalId).kill();
    return {};
  })
  .onRequest(methods.client.terminal.output, ({ params }) => {
    print("terminal/output", params);
    const terminal = terminals.get(params.terminalId);
    return { output: terminal.output, truncated: terminal.truncated, exitStatus: terminal.exitStatus };
  })
  .onRequest(methods.client.terminal.release, ({ params }) => {
    print("terminal/release", params);
    const terminal = terminals.get(params.terminalId);
    terminal.kill();
    if (terminal.slow) setTimeout(slowTerminalReleased, 0);
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
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: phase === "terminal" },
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
    // Chosen while a turn runs (its command allowed): asked from the next turn.
    const running = ask(agent, methods.agent.session.prompt, {
      sessionId: id,
      prompt: [{ type: "text", text: "Wait a second." }],
    });
    await slowCommandRuns;
    await choose(argument);
    await running;
    await ask(agent, methods.agent.session.prompt, { sessionId: id, prompt: [{ type: "text", text: "Which model?" }] });
    return;
  }
  if (phase === "terminal") {
    await ask(agent, methods.agent.session.prompt, { sessionId: id, prompt: [{ type: "text", text: "Run the checks." }] });
    const slowPrompt = ask(agent, methods.agent.session.prompt, {
      sessionId: id,
      prompt: [{ type: "text", text: "And the slow one." }],
    });
    // Without a terminal (the agent runs its commands itself), the prompt just ends.
    const inTerminal = await Promise.race([slowTerminalExists.then(() => true), slowPrompt.then(() => false)]);
    if (inTerminal) {
      // Long enough for the command to have started; the prompt must end well before it would.
      await sleep(300);
      await agent.notify(methods.agent.session.cancel, { sessionId: id });
      await slowPrompt;
      await slowTerminalGone;
    }
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

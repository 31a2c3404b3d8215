// `toolhost:api`: builds the host API a factory receives, loads the module's tools, and runs
// their hooks for the Rust side. Every function Rust calls returns JSON text,
// `{"ok": value}` or `{"error": "message"}`, so a tool's failure is a value, never a trap.
import * as typeboxModule from "@sinclair/typebox";

const { host, describe, abortError, require } = globalThis.__toolhost;
const LINES = Symbol.for("toolhost.renderLines");
// Styled text is needed only by render hooks: loaded on first use, not with every tool.
let styledText;
const styled = new Proxy({}, { get: (_, name) => (styledText ??= require("toolhost:text"))[name] });
const tools = [];
const pendingById = new Map();

const messageOf = (error) => {
  if (error instanceof Error) return error.message || error.name || "Error";
  if (typeof error === "string") return error;
  return describe(error);
};
const ok = (value) => JSON.stringify({ ok: value === undefined ? null : value });
// What was caught, with its name and stack, so that the host can say where it was thrown.
const fail = (error) => JSON.stringify(error instanceof Error
  ? { error: messageOf(error), name: error.name, stack: typeof error.stack === "string" ? error.stack : undefined }
  : { error: messageOf(error) });
const settle = (json) => {
  const result = JSON.parse(json);
  if (result.error !== undefined) throw new Error(result.error);
  return result.ok;
};
const logArgs = (args) => args.map(describe).join(" ");

function makeUi() {
  const request = async (kind, payload) => settle(await host.uiRequest(kind, JSON.stringify(payload)));
  return Object.freeze({
    notify: (message, level = "info") => { host.uiNotify(String(message), String(level)); },
    setStatus: (key, text) => { host.uiNotify(`${key}: ${text ?? ""}`, "status"); },
    confirm: (title, message) => request("confirm", { title, message }),
    select: (title, options) => request("select", { title, options }),
    input: (title, placeholder) => request("input", { title, placeholder }),
  });
}

function makeApi(info) {
  const typebox = Object.freeze({ ...typeboxModule.Type, ...typeboxModule });
  const exec = async (command, args = [], options = {}) => {
    const signal = options && options.signal;
    if (signal && signal.aborted) return { stdout: "", stderr: "", code: null, killed: true };
    const id = host.execId();
    const onAbort = () => host.execCancel(id);
    if (signal) signal.addEventListener("abort", onAbort);
    try {
      const request = { command: String(command), args: (args || []).map(String), cwd: options && options.cwd, timeout: options && options.timeout };
      return settle(await host.exec(id, JSON.stringify(request)));
    } finally {
      if (signal) signal.removeEventListener("abort", onAbort);
    }
  };
  const logger = Object.freeze({
    debug: (...args) => host.log("debug", logArgs(args)),
    info: (...args) => host.log("info", logArgs(args)),
    warn: (...args) => host.log("warn", logArgs(args)),
    error: (...args) => host.log("error", logArgs(args)),
  });
  // `api.pi`: the exports of pi's packages (pi-tui, pi-ai, pi-coding-agent) and zod, made on
  // first use so that a tool that never touches them pays nothing.
  let pi;
  const makePi = () => Object.freeze({
    ...require("@mariozechner/pi-tui"),
    ...require("@mariozechner/pi-ai"),
    ...require("@mariozechner/pi-coding-agent"),
    version: info.version,
    toolNames: Object.freeze([...info.toolNames]),
    typebox,
    zod: require("toolhost:zod"),
  });
  const api = {
    cwd: info.cwd,
    exec,
    ui: makeUi(),
    logger,
    typebox,
    pushPendingAction(action) {
      if (action === null || typeof action !== "object") throw new TypeError("pushPendingAction expects an action object");
      const { label, description, sourceToolName, details } = action;
      const id = host.pushPendingAction(JSON.stringify({ label, description, sourceToolName, details }));
      pendingById.set(id, action);
      return id;
    },
  };
  Object.defineProperty(api, "hasUI", { get: () => host.hasUI(), enumerable: true });
  Object.defineProperty(api, "pi", { get: () => (pi ??= makePi()), enumerable: true });
  return Object.freeze(api);
}

const toolSpec = (tool, index) => {
  if (tool === null || typeof tool !== "object") throw new Error(`tool #${index + 1} is not an object: the factory must return a tool or an array of tools`);
  if (typeof tool.name !== "string" || tool.name === "") throw new Error(`tool #${index + 1} has no name: give it a \`name\` string`);
  if (typeof tool.execute !== "function") throw new Error(`tool '${tool.name}' has no execute function`);
  return {
    name: tool.name,
    label: typeof tool.label === "string" && tool.label !== "" ? tool.label : tool.name,
    description: typeof tool.description === "string" ? tool.description : "",
    parameters: tool.parameters === undefined ? { type: "object", properties: {} } : JSON.parse(JSON.stringify(tool.parameters)),
    hooks: {
      onSession: typeof tool.onSession === "function",
      renderCall: typeof tool.renderCall === "function",
      renderResult: typeof tool.renderResult === "function",
    },
  };
};

// Adds a tool to the module's list; its spec with the index the Rust side calls it by.
const addTool = (tool) => {
  const spec = toolSpec(tool, tools.length);
  tools.push(tool);
  return { ...spec, index: tools.length - 1 };
};
// The module's pi extension (made at load): its handlers, commands and registrations.
let extension;

async function loadTools(namespace, infoJson, path) {
  try {
    const factory = typeof namespace.default === "function" ? namespace.default : namespace.factory;
    if (typeof factory !== "function") {
      throw new Error("the module exports no factory: write `export default (api) => ({ name, description, parameters, execute })` (or export a function named `factory`), or a pi extension `export default function (pi) { pi.registerTool(…) }`");
    }
    const info = JSON.parse(infoJson);
    const api = makeApi(info);
    extension = require("toolhost:extension").createExtension({ path, info, makeUi, exec: api.exec, addTool });
    // One object serves both contracts: the factory api and pi's ExtensionAPI.
    const both = extension.lenient(Object.defineProperties({}, { ...Object.getOwnPropertyDescriptors(api), ...Object.getOwnPropertyDescriptors(extension.api) }));
    const produced = await factory(both);
    const list = produced === undefined || produced === null ? [] : Array.isArray(produced) ? produced : [produced];
    const specs = list.map((tool) => addTool(tool));
    const registered = extension.takeRegistered();
    return ok({ tools: [...specs, ...registered.tools], commands: registered.commands, events: registered.events, ignored: registered.ignored, returned: produced !== undefined && produced !== null, declined: produced === null });
  } catch (error) {
    return fail(error);
  }
}

// An event for the module's extension handlers: what they combined to, and what they added.
async function callEmit(name, eventJson, run) {
  try {
    extension.setRun(run);
    const { result, errors } = await extension.emit(name, JSON.parse(eventJson));
    return ok({ result, errors, registered: extension.takeRegistered() });
  } catch (error) {
    return fail(error);
  }
}

async function callCommand(name, args, run) {
  try {
    extension.setRun(run);
    await extension.runCommand(name, args);
    return ok({ registered: extension.takeRegistered() });
  } catch (error) {
    return fail(error);
  }
}

async function callSetSession(json) {
  try {
    extension.setSession(JSON.parse(json));
    // `ok(null)` would read as no answer on the Rust side.
    return ok(true);
  } catch (error) {
    return fail(error);
  }
}

const contentBlock = (block, index) => {
  if (typeof block === "string") return { type: "text", text: block };
  if (block && block.type === "text") return { type: "text", text: String(block.text ?? "") };
  if (block && block.type === "image") {
    if (typeof block.data !== "string" || typeof block.mimeType !== "string") throw new Error(`content[${index}] is an image without base64 \`data\` and \`mimeType\``);
    return { type: "image", data: block.data, mimeType: block.mimeType };
  }
  throw new Error(`content[${index}] is not {type: "text", text} or {type: "image", data, mimeType}`);
};
const normalizeResult = (result) => {
  if (typeof result === "string") return { content: [{ type: "text", text: result }] };
  if (result === null || typeof result !== "object" || !Array.isArray(result.content)) {
    throw new Error("execute must return { content: [{ type: \"text\", text }], details? }");
  }
  return {
    content: result.content.map(contentBlock),
    details: result.details === undefined ? null : JSON.parse(JSON.stringify(result.details)),
    isError: result.isError === true,
  };
};
const normalizeUpdate = (update) => {
  if (typeof update === "string") return { content: [{ type: "text", text: update }] };
  const value = update ?? {};
  return {
    content: Array.isArray(value.content) ? value.content.map(contentBlock) : [],
    details: value.details === undefined ? null : JSON.parse(JSON.stringify(value.details)),
    progress: typeof value.progress === "number" ? value.progress : null,
    total: typeof value.total === "number" ? value.total : null,
  };
};

// Starts one call; returns { promise, abort } so that Rust can abort the signal later.
function callExecute(index, callId, paramsJson, contextJson, sendUpdate, requestAbort) {
  const tool = tools[index];
  const controller = new AbortController();
  const info = JSON.parse(contextJson);
  const ctx = Object.freeze({
    cwd: info.cwd,
    sessionId: info.sessionId,
    model: info.model,
    get hasUI() { return host.hasUI(); },
    abort: () => requestAbort(),
  });
  const onUpdate = (update) => { sendUpdate(JSON.stringify(normalizeUpdate(update))); };
  const promise = (async () => {
    try {
      return ok(normalizeResult(await tool.execute(callId, JSON.parse(paramsJson), onUpdate, ctx, controller.signal)));
    } catch (error) {
      return fail(error);
    }
  })();
  return { promise, abort: (reason) => controller.abort(abortError("AbortError", reason)) };
}

async function callSession(index, eventJson, contextJson) {
  try {
    const event = JSON.parse(eventJson);
    await tools[index].onSession({ ...event, reason: event.type }, JSON.parse(contextJson));
    return ok(null);
  } catch (error) {
    return fail(error);
  }
}

// A render hook's value as the declarative tree `render_tree.rs` reads: blocks of
// `{type: "line", spans}` and `{type: "section", title, collapsed, lines}`. Text only: the UI
// styles it and strips control characters, so a hook cannot write terminal escapes.
const STYLE_KEYS = ["fg", "bg"];
const FLAG_KEYS = ["bold", "italic", "underline", "dim"];
const clean = (span) => {
  const out = { text: String(span.text ?? "") };
  for (const key of STYLE_KEYS) if (typeof span[key] === "string") out[key] = span[key];
  for (const key of FLAG_KEYS) if (span[key] === true) out[key] = true;
  return out;
};
// Text may carry styled runs (theme.fg(...) + theme.bold(...)) and ANSI colours: decoded here.
const renderSpans = (span) => {
  if (typeof span === "string" || typeof span === "number") return styled.spans(String(span)).map(clean);
  if (span && typeof span === "object" && "text" in span) return styled.spans(String(span.text ?? ""), clean(span)).map(clean);
  throw new Error("a span must be text or { text, fg?, bg?, bold?, italic?, underline?, dim? }");
};
const renderLine = (line) => {
  let spans;
  if (typeof line === "string") spans = renderSpans(line);
  else if (Array.isArray(line)) spans = line.flatMap(renderSpans);
  else if (line && typeof line === "object" && Array.isArray(line.spans)) spans = line.spans.flatMap(renderSpans);
  else if (line && typeof line === "object" && "text" in line) spans = renderSpans(line);
  else throw new Error("a line must be text, an array of spans or { spans }");
  return { spans: spans.length > 0 ? spans : [{ text: "" }] };
};
const textBlocks = (text) => styled.splitLines(text).map((line) => ({ type: "line", ...renderLine(line) }));
const renderBlocks = (value) => {
  if (typeof value === "string") return textBlocks(value);
  // pi-tui components become their lines (the UI wraps them); other components render at 80.
  if (value && typeof value[LINES] === "function") return value[LINES]().flatMap(textBlocks);
  if (value && typeof value.render === "function") return renderBlocks(value.render(80));
  if (!Array.isArray(value)) throw new Error("a render hook must return text, an array of lines, sections, or a pi-tui component");
  const blocks = [];
  for (const item of value) {
    if (item && typeof item === "object" && !Array.isArray(item) && "section" in item) {
      const lines = Array.isArray(item.lines) ? item.lines : [];
      blocks.push({ type: "section", title: renderLine(item.section), collapsed: item.collapsed === true, lines: lines.map(renderLine) });
    } else if (typeof item === "string") {
      blocks.push(...textBlocks(item));
    } else {
      blocks.push({ type: "line", ...renderLine(item) });
    }
  }
  return blocks;
};
// The theme a hook receives: its colours by role, and helpers that make styled text.
const withHelpers = (theme) => styled.theme(theme);
function callRender(index, hook, argsJson) {
  try {
    const tool = tools[index];
    const args = JSON.parse(argsJson);
    const themeAt = hook === "renderCall" ? 1 : 2;
    args[themeAt] = withHelpers(args[themeAt] ?? {});
    const value = tool[hook](...args);
    if (value && typeof value.then === "function") throw new Error(`${hook} must return its text synchronously, not a promise`);
    return ok({ blocks: renderBlocks(value) });
  } catch (error) {
    return fail(error);
  }
}

// Applies (`apply()`) or discards (`reject()`, when the action has one) a pending action.
async function callResolve(id, apply) {
  try {
    const action = pendingById.get(id);
    if (action === undefined) throw new Error(`no pending action ${id} (already resolved?)`);
    pendingById.delete(id);
    const hook = apply ? action.apply : action.reject;
    const value = typeof hook === "function" ? await hook.call(action) : undefined;
    return ok(value === undefined ? null : (typeof value === "string" ? value : describe(value)));
  } catch (error) {
    return fail(error);
  }
}

// What the host's poll of an `fs.watch` found (see `js/fs.js`).
async function callWatch(id, foundJson) {
  try {
    require("node:fs")[Symbol.for("toolhost.deliverWatch")](id, JSON.parse(foundJson));
    return ok(null);
  } catch (error) {
    return fail(error);
  }
}

// The run in progress was cancelled: the extension's `ctx.signal` aborts.
function abortRun() {
  extension?.abortRun();
}

globalThis.__toolhost_api = Object.freeze({ loadTools, callExecute, callSession, callRender, callResolve, callEmit, callCommand, callSetSession, abortRun, callWatch });

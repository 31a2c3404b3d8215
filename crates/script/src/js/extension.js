// `toolhost:extension`: pi's ExtensionAPI for one module's engine. A module whose default export
// is `function (pi) { pi.registerTool(…); pi.on("tool_call", …) }` gets this object (merged with
// the factory api, so one export may do both). Registrations are kept here; the Rust side asks
// for them after loading and after every event (`takeRegistered`), and emits events through
// `emit`, whose results follow pi's rules for each event (see `COMBINE`). What the session must
// do (append an entry, send a message, abort) goes to the host as an action.
const { host, describe } = globalThis.__toolhost;

// Events pi fires that toolhost fires too; others are accepted and never fire.
const EVENTS = new Set([
  "session_start", "session_shutdown", "session_switch", "session_fork", "session_tree",
  "session_before_switch", "session_before_fork", "session_before_tree",
  "session_before_compact", "session_compact", "before_agent_start", "agent_start", "agent_end",
  "turn_start", "turn_end", "input", "context", "tool_call", "tool_result",
  "tool_execution_start", "tool_execution_update", "tool_execution_end",
  "message_start", "message_end", "model_select",
]);

// Names other pis use for events toolhost fires: oh-my-pi's (and pi's before 2026)
// `session_branch`, and the newer `agent_settled` (the run is over and nothing is queued).
const EVENT_ALIASES = { session_branch: "session_fork", session_before_branch: "session_before_fork", agent_settled: "agent_end" };

const messageOf = (error) => (error instanceof Error ? error.message || error.name : describe(error));
const clone = (value) => (value === undefined ? undefined : JSON.parse(JSON.stringify(value)));
const action = (kind, payload) => host.extensionAction(kind, JSON.stringify(payload ?? null));

// What toolhost cannot draw: the call answers this error, naming itself, and nothing crashes.
const notHere = (call, why) => () => {
  throw new Error(`${call} is not available in toolhost: ${why}`);
};
const UI_ONLY = "toolhost's UI draws its own editor, footer, header and overlays; extensions reach the user through notify, confirm, select, input, setStatus and setWidget";

// `pi.events`: one bus for every extension of the session, as in pi. What one extension emits
// reaches its own handlers at once and the other extensions' through the host (each runs in an
// engine of its own), as the internal event BUS_EVENT.
const BUS_EVENT = "toolhost:bus";
// How a `ctx.compact()` that passed callbacks hears how the compaction ended.
const COMPACTED_EVENT = "toolhost:compacted";
function createEventBus(path) {
  const handlers = new Map();
  const deliver = (channel, data) => {
    for (const handler of [...(handlers.get(channel) ?? [])]) {
      try { handler(data); } catch (error) { host.log("warn", `${path}: pi.events handler for '${channel}' failed: ${messageOf(error)}`); }
    }
  };
  return Object.freeze({
    emit(channel, data) {
      deliver(channel, data);
      action("bus_emit", { channel: String(channel), data: clone(data) ?? null });
    },
    receive: deliver,
    get listening() { return handlers.size > 0; },
    on(channel, handler) {
      const list = handlers.get(channel) ?? [];
      list.push(handler);
      handlers.set(channel, list);
      return () => handlers.set(channel, (handlers.get(channel) ?? []).filter((h) => h !== handler));
    },
    clear() { handlers.clear(); },
  });
}

// The session as extensions see it, read-only as pi's `ReadonlySessionManager`: in a session
// toolhost keeps (run, chat) its entries are read from the store when asked — the
// conversation as `message` entries, the extensions' own as `custom` ones; elsewhere
// (`toolhost call`) only what the extension appended here.
function sessionManagerOf(session) {
  const entries = (scope) => {
    const stored = host.sessionEntries(scope);
    return stored == null ? session.entries.map((entry) => ({ ...entry })) : JSON.parse(stored);
  };
  const branch = () => entries("branch");
  const all = () => entries("all");
  const treeOf = (list) => {
    const nodes = new Map(list.map((entry) => [entry.id, { entry, children: [] }]));
    const roots = [];
    for (const node of nodes.values()) {
      const parent = nodes.get(node.entry.parentId);
      (parent ? parent.children : roots).push(node);
    }
    return roots;
  };
  return Object.freeze({
    getEntries: all,
    getBranch: (fromId) => {
      const path = branch();
      if (fromId === undefined) return path;
      const at = path.findIndex((entry) => entry.id === fromId);
      return at < 0 ? [] : path.slice(0, at + 1);
    },
    getLeafEntry: () => branch().at(-1),
    getLeafId: () => branch().at(-1)?.id ?? null,
    getEntry: (id) => all().find((entry) => entry.id === id),
    getChildren: (id) => all().filter((entry) => entry.parentId === id),
    getSessionId: () => session.id ?? undefined,
    getSessionName: () => session.name,
    getSessionFile: () => undefined,
    getSessionDir: () => undefined,
    getCwd: () => session.cwd,
    getHeader: () => ({ type: "session", id: session.id ?? undefined, cwd: session.cwd }),
    getLabel: () => undefined,
    getTree: () => treeOf(all()),
  });
}

function createExtension({ path, info, makeUi, exec, addTool }) {
  const handlers = new Map();
  const commands = new Map();
  const flags = new Map();
  const fresh = { tools: [], commands: [] };
  const session = { id: null, name: undefined, cwd: info.cwd, entries: [], model: undefined, idle: true, usage: undefined, tools: [], active: null, systemPrompt: "", run: undefined };
  let nextEntry = 1;
  // `ctx.compact()` callbacks waiting for the compaction, by request number.
  const compactCallbacks = new Map();
  let nextCompact = 1;
  const ui = makeUi();
  const warn = (text) => host.log("warn", `${path}: ${text}`);
  // What toolhost accepts and ignores (UI-only registrations), by call, for the load report.
  const ignoredCalls = new Set();
  const ignored = (call, why) => () => { ignoredCalls.add(call); warn(`${call} is ignored: ${why}`); };
  const extensionUi = Object.freeze({
    ...ui,
    setWidget: (key, content) => {
      if (content === undefined || content === null) return;
      if (!Array.isArray(content)) throw new Error(`ctx.ui.setWidget('${key}') with a component is not available in toolhost: ${UI_ONLY}; give it an array of lines`);
      ui.setStatus(key, content.map(String).join("\n"));
    },
    setWorkingMessage: () => {},
    setWorkingIndicator: () => {},
    setTitle: () => {},
    setEditorText: notHere("ctx.ui.setEditorText", UI_ONLY),
    getEditorText: () => "",
    editor: (title, prefill) => ui.input(title, prefill ?? ""),
    custom: notHere("ctx.ui.custom", UI_ONLY),
    setFooter: notHere("ctx.ui.setFooter", UI_ONLY),
    setHeader: notHere("ctx.ui.setHeader", UI_ONLY),
    setEditorComponent: notHere("ctx.ui.setEditorComponent", UI_ONLY),
    pasteToEditor: notHere("ctx.ui.pasteToEditor", UI_ONLY),
    getAllThemes: () => [],
    getTheme: () => undefined,
    setTheme: () => ({ success: false, error: "themes are toolhost's own" }),
    get theme() { return require("toolhost:text").theme(); },
  });
  const sessionManager = sessionManagerOf(session);
  const context = {
    ui: extensionUi,
    get hasUI() { return host.hasUI(); },
    // pi's run modes: the full-screen or line chat is "interactive", `toolhost run` "print".
    get mode() { return host.hasUI() ? "interactive" : "print"; },
    // The project's extensions load only where toolhost loads them, so it is trusted.
    isProjectTrusted: () => true,
    get cwd() { return session.cwd; },
    sessionManager,
    // Models and their keys are toolhost's: an extension finds none (and no key to call one).
    modelRegistry: Object.freeze({
      find: () => undefined, getAll: () => [], getAvailable: () => [], getProvider: () => undefined,
      getApiKey: async () => undefined, getApiKeyForProvider: async () => undefined,
      getApiKeyAndHeaders: async () => undefined, getProviderAuth: () => undefined, isUsingOAuth: () => false,
    }),
    get model() { return session.model; },
    isIdle: () => session.idle,
    abort: () => action("abort"),
    hasPendingMessages: () => false,
    shutdown: () => action("shutdown"),
    getContextUsage: () => session.usage,
    // The run in progress: aborts when it is cancelled (Ctrl-C, ctx.abort()); undefined
    // between runs.
    get signal() { return session.run?.signal; },
    compact: (options) => {
      const customInstructions = typeof options?.customInstructions === "string" ? options.customInstructions : null;
      const { onComplete, onError } = options ?? {};
      if (typeof onComplete !== "function" && typeof onError !== "function") return action("compact", { customInstructions });
      const requestId = nextCompact++;
      compactCallbacks.set(requestId, { onComplete, onError });
      action("compact", { customInstructions, requestId });
    },
    getSystemPrompt: () => session.systemPrompt,
  };
  const ctx = Object.freeze(context);
  // A command's context: the handler's, with the session controls pi gives commands.
  const commandCtx = Object.freeze(Object.assign(Object.create(ctx), {
    waitForIdle: async () => {},
    newSession: notHere("ctx.newSession", "a command cannot start another session in toolhost; start one with `toolhost run` or /new in chat"),
    fork: notHere("ctx.fork", "use /branch in toolhost chat"),
    navigateTree: notHere("ctx.navigateTree", "use /tree in toolhost chat"),
    switchSession: notHere("ctx.switchSession", "use `toolhost chat --resume ID`"),
    reload: async () => action("reload"),
  }));

  const bus = createEventBus(path);

  const register = (definition) => {
    if (definition === null || typeof definition !== "object") throw new TypeError("pi.registerTool expects a tool definition object");
    if (typeof definition.name !== "string" || definition.name === "") throw new TypeError("pi.registerTool: the tool has no name: give it a `name` string");
    if (typeof definition.execute !== "function") throw new TypeError(`pi.registerTool: tool '${definition.name}' has no execute function`);
    // pi's order is (toolCallId, params, signal, onUpdate, ctx); the engine calls
    // (toolCallId, params, onUpdate, callCtx, signal).
    const tool = Object.create(definition, {
      execute: {
        value: (id, params, onUpdate, callCtx, signal) => definition.execute(id, params, signal, onUpdate, Object.create(ctx, { abort: { value: callCtx.abort }, signal: { value: signal } })),
      },
    });
    const spec = addTool(tool);
    const snippet = typeof definition.promptSnippet === "string" ? definition.promptSnippet : null;
    const guidelines = Array.isArray(definition.promptGuidelines) ? definition.promptGuidelines.map(String) : [];
    fresh.tools.push({ ...spec, promptSnippet: snippet, promptGuidelines: guidelines });
  };

  const api = {
    on(named, handler) {
      if (typeof handler !== "function") throw new TypeError(`pi.on('${named}') expects a handler function`);
      const event = EVENT_ALIASES[named] ?? named;
      if (!EVENTS.has(event)) warn(`pi.on('${event}'): toolhost never fires this event`);
      const list = handlers.get(event) ?? [];
      list.push(handler);
      handlers.set(event, list);
    },
    registerTool: register,
    registerCommand(name, options) {
      if (typeof name !== "string" || name === "") throw new TypeError("pi.registerCommand expects a name");
      const handler = options && options.handler;
      if (typeof handler !== "function") throw new TypeError(`pi.registerCommand('${name}') has no handler function`);
      const description = typeof options.description === "string" ? options.description : "";
      commands.set(name, { handler, description });
      fresh.commands.push({ name, description });
    },
    getCommands: () => [...commands].map(([name, { description }]) => ({ name, description, source: "extension", path })),
    registerShortcut: ignored("pi.registerShortcut", "toolhost's keys are its own"),
    registerMessageRenderer: ignored("pi.registerMessageRenderer", "toolhost draws messages itself"),
    registerEntryRenderer: ignored("pi.registerEntryRenderer", "toolhost draws the session itself"),
    registerProvider: ignored("pi.registerProvider", "custom providers are not available in toolhost; configure the provider in [providers] instead"),
    unregisterProvider: () => {},
    registerFlag(name, options) { flags.set(name, options && options.default); },
    getFlag: (name) => flags.get(name),
    sendMessage(message, options) { action("send_message", { message: clone(message), options: clone(options) }); },
    sendUserMessage(content, options) { action("send_user_message", { content: clone(content), options: clone(options) }); },
    appendEntry(customType, data) {
      if (typeof customType !== "string" || customType === "") throw new TypeError("pi.appendEntry expects a customType string");
      const stored = clone(data) ?? null;
      // Where the session has a store, the entry goes there at once; elsewhere it stays here.
      if (host.appendEntry(customType, JSON.stringify(stored))) return;
      const entry = { type: "custom", id: `ext-${nextEntry++}`, parentId: session.entries[session.entries.length - 1]?.id ?? null, timestamp: new Date().toISOString(), customType, data: stored };
      session.entries.push(entry);
    },
    setSessionName(name) { session.name = String(name); action("set_session_name", { name: session.name }); },
    getSessionName: () => session.name,
    setLabel: () => {},
    exec,
    getActiveTools: () => [...(session.active ?? session.tools.map((tool) => tool.name))],
    getAllTools: () => session.tools.map((tool) => ({ ...tool })),
    setActiveTools(names) {
      if (!Array.isArray(names)) throw new TypeError("pi.setActiveTools expects an array of tool names");
      session.active = names.map(String);
      action("set_active_tools", { names: session.active });
    },
    setModel: async () => false,
    getThinkingLevel: () => "off",
    setThinkingLevel: () => {},
    events: bus,
  };

  const takeRegistered = () => {
    const events = [...handlers.keys()];
    if (bus.listening) events.push(BUS_EVENT);
    const taken = { tools: fresh.tools.splice(0), commands: fresh.commands.splice(0), events, ignored: [...ignoredCalls] };
    return taken;
  };

  // Runs every handler of `name` in order; `combine` folds their answers (pi's rules).
  async function emit(name, event) {
    if (name === BUS_EVENT) {
      bus.receive(event.channel, event.data);
      return { result: null, errors: [] };
    }
    if (name === COMPACTED_EVENT) return answerCompact(event);
    const list = handlers.get(name) ?? [];
    const errors = [];
    if (name === "agent_start") session.idle = false;
    if (name === "agent_end") session.idle = true;
    let result = COMBINE[name] ? COMBINE[name].start(event) : null;
    for (const handler of list) {
      const current = { ...(COMBINE[name] ? COMBINE[name].event(event, result) : event), type: name };
      let answer;
      try {
        answer = await handler(current, ctx);
      } catch (error) {
        const message = `the ${name} handler failed: ${messageOf(error)}`;
        errors.push(message);
        // pi blocks a call whose tool_call handler throws.
        if (name === "tool_call") return { result: { block: true, reason: `${path}: ${message}` }, errors };
        continue;
      }
      if (COMBINE[name]) {
        const step = COMBINE[name].fold(result, answer, current);
        result = step.result;
        if (step.stop) break;
      }
    }
    return { result, errors };
  }

  // Calls the callback of the `ctx.compact()` numbered `event.requestId`: onComplete with
  // pi's CompactionResult, or onError with an Error.
  async function answerCompact(event) {
    const callbacks = compactCallbacks.get(event.requestId);
    compactCallbacks.delete(event.requestId);
    const errors = [];
    try {
      if (event.error === undefined) await callbacks?.onComplete?.(event.result);
      else await callbacks?.onError?.(new Error(event.error));
    } catch (error) {
      errors.push(`the ctx.compact() callback failed: ${messageOf(error)}`);
    }
    return { result: null, errors };
  }

  async function runCommand(name, args) {
    const command = commands.get(name);
    if (command === undefined) throw new Error(`no command /${name} in ${path}`);
    await command.handler(String(args ?? ""), commandCtx);
  }

  function setSession(update) {
    for (const key of ["id", "name", "cwd", "model", "usage", "tools", "systemPrompt"]) {
      if (update[key] !== undefined) session[key] = update[key];
    }
  }

  // A registration or setting of a newer pi than toolhost knows (`pi.registerXyz`,
  // `pi.setXyz`) is accepted with a warning, like the UI-only ones; other unknown names stay
  // undefined, so that feature checks (`if (pi.newThing)`) see what is there.
  const unknownCall = /^(register|unregister|set)[A-Z]/;
  const lenient = (target) => new Proxy(target, {
    get(object, key, receiver) {
      if (typeof key === "string" && !(key in object) && unknownCall.test(key)) {
        return ignored(`pi.${key}`, "toolhost's ExtensionAPI has no such call");
      }
      return Reflect.get(object, key, receiver);
    },
  });

  // The host numbers its runs: a new number is a new run, with a new `ctx.signal`; none, no
  // run in progress.
  const setRun = (number) => {
    if (number === null || number === undefined) {
      session.run = undefined;
      session.runNumber = undefined;
    } else if (number !== session.runNumber) {
      session.runNumber = number;
      session.run = new AbortController();
    }
  };
  const abortRun = () => session.run?.abort(new Error("the run was cancelled"));

  return { api, lenient, emit, runCommand, setSession, takeRegistered, setRun, abortRun };
}

// How each event's handlers' answers combine, as pi's runner does: `start` is the result before
// any handler, `event` what the next handler sees, `fold` takes one answer in.
const COMBINE = {
  tool_call: {
    start: (event) => ({ block: false, input: event.input }),
    event: (event, result) => ({ ...event, input: result.input }),
    fold: (result, answer, seen) => {
      // A handler may change `event.input` in place, or answer { input }.
      const input = answer && answer.input !== undefined ? answer.input : seen.input;
      if (answer && answer.block) return { result: { block: true, reason: answer.reason, input }, stop: true };
      return { result: { ...result, input } };
    },
  },
  tool_result: {
    start: (event) => ({ content: event.content, details: event.details, isError: event.isError }),
    event: (event, result) => ({ ...event, ...result }),
    fold: (result, answer) => {
      if (!answer || typeof answer !== "object") return { result };
      const next = { ...result };
      if (answer.content !== undefined) next.content = answer.content;
      if (answer.details !== undefined) next.details = answer.details;
      if (answer.isError !== undefined) next.isError = answer.isError === true;
      return { result: next };
    },
  },
  context: {
    start: (event) => ({ messages: event.messages }),
    event: (event, result) => ({ ...event, messages: result.messages }),
    fold: (result, answer) => ({ result: answer && Array.isArray(answer.messages) ? { messages: answer.messages } : result }),
  },
  before_agent_start: {
    start: (event) => ({ systemPrompt: event.systemPrompt, messages: [] }),
    event: (event, result) => ({ ...event, systemPrompt: result.systemPrompt }),
    fold: (result, answer) => {
      if (!answer || typeof answer !== "object") return { result };
      // oh-my-pi's (and pi's hooks') `systemPromptAppend` adds to the prompt instead.
      const base = typeof answer.systemPrompt === "string" ? answer.systemPrompt : result.systemPrompt;
      return {
        result: {
          systemPrompt: typeof answer.systemPromptAppend === "string" && answer.systemPromptAppend !== "" ? `${base}\n\n${answer.systemPromptAppend}` : base,
          messages: answer.message ? [...result.messages, clone(answer.message)] : result.messages,
        },
      };
    },
  },
  input: {
    start: (event) => ({ action: "continue", text: event.text }),
    event: (event, result) => ({ ...event, text: result.text }),
    fold: (result, answer) => {
      if (answer && answer.action === "handled") return { result: { action: "handled", text: result.text }, stop: true };
      if (answer && answer.action === "transform" && typeof answer.text === "string") return { result: { action: "transform", text: answer.text } };
      return { result };
    },
  },
};
for (const name of ["session_before_switch", "session_before_fork", "session_before_tree", "session_before_compact"]) {
  COMBINE[name] = {
    start: () => ({ cancel: false }),
    event: (event) => event,
    fold: (result, answer) => (answer && answer.cancel ? { result: { ...clone(answer), cancel: true }, stop: true } : { result: answer ? { ...result, ...clone(answer) } : result }),
  };
}

module.exports = { createExtension };

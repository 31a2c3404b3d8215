// The built-in `@mariozechner/pi-coding-agent` (also under `@oh-my-pi/` and
// `@earendil-works/`): what a tool module uses from pi's own package — the schema helpers, the
// truncation helpers and limits, themes for rendering, the event bus, front matter, the config
// folder — and the pi-tui components oh-my-pi re-exports. The agent itself (sessions, models,
// the interactive mode, built-in tool factories) belongs to toolhost: those names resolve, and
// throw a clear error when used.
const { host } = globalThis.__toolhost;
const styled = require("toolhost:text");
const { Type, StringEnum } = require("@sinclair/typebox");
const tui = require("@mariozechner/pi-tui");

const DEFAULT_MAX_LINES = 2000;
const DEFAULT_MAX_BYTES = 50 * 1024;
const byteLength = (text) => new TextEncoder().encode(text).length;

const formatSize = (bytes) => (bytes < 1024 ? `${bytes}B` : bytes < 1024 * 1024 ? `${(bytes / 1024).toFixed(1)}KB` : `${(bytes / (1024 * 1024)).toFixed(1)}MB`);

// Keeps whole lines from the start (head) or the end (tail) within both limits.
function truncate(content, options, fromEnd) {
  const maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const lines = content.split("\n");
  const totalBytes = byteLength(content);
  const base = { totalLines: lines.length, totalBytes, maxLines, maxBytes, lastLinePartial: false, firstLineExceedsLimit: false };
  if (lines.length <= maxLines && totalBytes <= maxBytes) {
    return { ...base, content, truncated: false, truncatedBy: null, outputLines: lines.length, outputBytes: totalBytes };
  }
  const ordered = fromEnd ? [...lines].reverse() : lines;
  const kept = [];
  let bytes = 0;
  let truncatedBy = "lines";
  for (const line of ordered) {
    if (kept.length >= maxLines) { truncatedBy = "lines"; break; }
    const size = byteLength(line) + (kept.length > 0 ? 1 : 0);
    if (bytes + size > maxBytes) { truncatedBy = "bytes"; break; }
    kept.push(line);
    bytes += size;
  }
  if (kept.length === 0) {
    return { ...base, content: "", truncated: true, truncatedBy: "bytes", outputLines: 0, outputBytes: 0, firstLineExceedsLimit: !fromEnd };
  }
  const output = (fromEnd ? kept.reverse() : kept).join("\n");
  return { ...base, content: output, truncated: true, truncatedBy, outputLines: kept.length, outputBytes: byteLength(output) };
}
const truncateHead = (content, options = {}) => truncate(String(content), options, false);
const truncateTail = (content, options = {}) => truncate(String(content), options, true);
const truncateLine = (line, maxChars = 500) => (line.length <= maxChars ? { text: line, wasTruncated: false } : { text: `${line.slice(0, maxChars)}... [truncated]`, wasTruncated: true });
const truncateToVisualLines = (text, maxLines, width = 80) => {
  const lines = styled.wrap(String(text), width);
  return lines.length <= maxLines ? { visualLines: lines, skippedCount: 0 } : { visualLines: lines.slice(-maxLines), skippedCount: lines.length - maxLines };
};

const theme = styled.theme();
const markdownTheme = () => ({
  heading: (text) => theme.bold(theme.fg("accent", text)),
  link: (text) => theme.fg("accent", text),
  linkUrl: (text) => theme.fg("muted", text),
  code: (text) => theme.fg("accent", text),
  codeBlock: (text) => theme.fg("muted", text),
  codeBlockBorder: (text) => theme.fg("muted", text),
  quote: (text) => theme.italic(text),
  quoteBorder: (text) => theme.fg("muted", text),
  hr: (text) => theme.fg("muted", text),
  listBullet: (text) => theme.fg("accent", text),
  bold: (text) => theme.bold(text),
  italic: (text) => theme.italic(text),
  underline: (text) => theme.underline(text),
  strikethrough: (text) => text,
  highlightCode: (code) => String(code).split("\n"),
});
const listTheme = () => ({
  selectedPrefix: (text) => theme.fg("accent", text),
  selectedText: (text) => theme.fg("accent", text),
  description: (text) => theme.fg("muted", text),
  scrollInfo: (text) => theme.fg("muted", text),
  noMatch: (text) => theme.fg("muted", text),
  label: (text) => text,
  value: (text) => theme.fg("accent", text),
  hint: (text) => theme.fg("muted", text),
  cursor: "> ",
});
class Theme {
  constructor() { Object.assign(this, styled.theme()); }
}

const createEventBus = () => {
  const handlers = new Map();
  return {
    emit(channel, data) { for (const handler of [...(handlers.get(channel) ?? [])]) { try { handler(data); } catch (error) { console.error(`event bus handler for '${channel}' failed:`, error); } } },
    on(channel, handler) { const list = handlers.get(channel) ?? []; list.push(handler); handlers.set(channel, list); return () => handlers.set(channel, (handlers.get(channel) ?? []).filter((h) => h !== handler)); },
    clear() { handlers.clear(); },
  };
};

// `---` front matter of simple `key: value` lines (quotes stripped; `[a, b]` lists).
const parseFrontmatter = (content) => {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(String(content));
  if (!match) return { frontmatter: {}, body: String(content) };
  const frontmatter = {};
  for (const line of match[1].split(/\r?\n/)) {
    const pair = /^([A-Za-z0-9_-]+):\s*(.*)$/.exec(line);
    if (!pair) continue;
    let value = pair[2].trim();
    if (/^\[.*\]$/.test(value)) value = value.slice(1, -1).split(",").map((item) => item.trim().replace(/^["']|["']$/g, "")).filter(Boolean);
    else if (value === "true" || value === "false") value = value === "true";
    else value = value.replace(/^["']|["']$/g, "");
    frontmatter[pair[1]] = value;
  }
  return { frontmatter, body: String(content).slice(match[0].length) };
};
const LANGUAGES = { ts: "typescript", tsx: "typescript", js: "javascript", jsx: "javascript", mjs: "javascript", cjs: "javascript", py: "python", rs: "rust", go: "go", rb: "ruby", java: "java", c: "c", h: "c", cpp: "cpp", cs: "csharp", sh: "bash", bash: "bash", zsh: "bash", json: "json", yaml: "yaml", yml: "yaml", toml: "toml", md: "markdown", html: "html", css: "css", sql: "sql", swift: "swift", kt: "kotlin" };
const getLanguageFromPath = (path) => LANGUAGES[String(path).split(".").pop().toLowerCase()];
const info = JSON.parse(host.systemInfo());
const isToolResult = (name) => (event) => Boolean(event) && event.toolName === name;

const agent = {
  VERSION: "0.0.0-toolhost",
  Type,
  StringEnum,
  Text: tui.Text,
  Container: tui.Container,
  Spacer: tui.Spacer,
  Markdown: tui.Markdown,
  Box: tui.Box,
  DEFAULT_MAX_LINES,
  DEFAULT_MAX_BYTES,
  formatSize,
  truncateHead,
  truncateTail,
  truncateLine,
  truncateToVisualLines,
  getMarkdownTheme: markdownTheme,
  getSelectListTheme: listTheme,
  getSettingsListTheme: listTheme,
  Theme,
  initTheme: () => {},
  highlightCode: (code) => String(code).split("\n"),
  createEventBus,
  parseFrontmatter,
  stripFrontmatter: (content) => parseFrontmatter(content).body,
  getLanguageFromPath,
  getAgentDir: () => `${info.home ?? ""}/.pi/agent`,
  keyHint: (_action, description) => String(description ?? ""),
  rawKeyHint: (key, description) => `${key} ${description ?? ""}`.trim(),
  appKeyHint: (_keys, _action, description) => String(description ?? ""),
  formatKeyHint: (key) => String(key),
  formatKeyHints: (hints) => (Array.isArray(hints) ? hints.map(String).join("  ") : ""),
  // pi's typing helpers: at run time they give back what they are given.
  defineTool: (tool) => tool,
  isToolCallEventType: (name, event) => Boolean(event) && event.toolName === name,
  isBashToolResult: isToolResult("bash"),
  isReadToolResult: isToolResult("read"),
  isEditToolResult: isToolResult("edit"),
  isWriteToolResult: isToolResult("write"),
  isGrepToolResult: isToolResult("grep"),
  isFindToolResult: isToolResult("find"),
  isLsToolResult: isToolResult("ls"),
  logger: Object.freeze({ debug: console.debug, info: console.info, warn: console.warn, error: console.error }),
};
const unavailable = (name) => function () {
  throw new Error(`pi-coding-agent's ${name} is part of pi's own agent, which toolhost replaces: custom tools cannot use it (tools reach the host through the api their factory receives)`);
};
const AGENT_ONLY = ["AgentSession", "ArminComponent", "AssistantMessageComponent", "AuthStorage", "BUILTIN_TOOLS", "BashExecutionComponent", "BorderedLoader", "BranchSummaryMessageComponent", "CURRENT_SESSION_VERSION", "CompactionSummaryMessageComponent", "CustomEditor", "CustomMessageComponent", "DEFAULT_COMPACTION_SETTINGS", "DefaultPackageManager", "DefaultResourceLoader", "DynamicBorder", "ExtensionEditorComponent", "ExtensionInputComponent", "ExtensionRunner", "ExtensionSelectorComponent", "FileAuthStorageBackend", "FooterComponent", "InMemoryAuthStorageBackend", "InteractiveMode", "LoginDialogComponent", "ModelRegistry", "ModelSelectorComponent", "OAuthSelectorComponent", "SessionManager", "SessionSelectorComponent", "SettingsManager", "SettingsSelectorComponent", "ShowImagesSelectorComponent", "SkillInvocationMessageComponent", "ThemeSelectorComponent", "ThinkingSelectorComponent", "ToolExecutionComponent", "TreeSelectorComponent", "UserMessageComponent", "UserMessageSelectorComponent", "bashTool", "buildSessionContext", "buildSystemPrompt", "calculateContextTokens", "codingTools", "collectEntriesForBranchSummary", "compact", "convertToLlm", "copyToClipboard", "createAgentSession", "createBashTool", "createCodingTools", "createEditTool", "createExtensionRuntime", "createFindTool", "createGrepTool", "createLsTool", "createReadOnlyTools", "createReadTool", "createTools", "createWriteTool", "discoverAndLoadCustomTools", "discoverAndLoadExtensions", "discoverAuthStorage", "discoverContextFiles", "discoverCustomTSCommands", "discoverExtensions", "discoverMCPServers", "discoverModels", "discoverPromptTemplates", "discoverSkills", "discoverSlashCommands", "editTool", "editorKey", "estimateTokens", "findCutPoint", "findTool", "findTurnStartIndex", "formatSkillsForPrompt", "generateBranchSummary", "generateSummary", "getLastAssistantUsage", "getLatestCompactionEntry", "getShellConfig", "gitTool", "grepTool", "loadCustomTools", "loadSettings", "loadSkills", "loadSkillsFromDir", "lsTool", "main", "migrateSessionEntries", "parseSessionEntries", "parseSkillBlock", "prepareBranchEntries", "readOnlyTools", "readTool", "renderDiff", "runPrintMode", "runRpcMode", "serializeConversation", "shouldCompact", "wrapRegisteredTool", "wrapRegisteredTools", "writeTool"];
// pi's own tools, rebuilt on node:fs and node:child_process (made on first use).
const piTools = () => require("toolhost:pi-tools");
for (const name of ["createReadTool", "createBashTool", "createWriteTool", "createEditTool", "createLsTool", "createGrepTool", "createFindTool", "createCodingTools", "createReadOnlyTools"]) {
  agent[name] = (...args) => piTools()[name](...args);
}
// pi's edit helpers (made on first use).
for (const name of ["generateDiffString", "generateUnifiedPatch", "withFileMutationQueue"]) {
  agent[name] = (...args) => require("toolhost:pi-edit")[name](...args);
}
// A newer pi's names for the same factories (the definition an extension registers).
for (const name of ["Read", "Bash", "Write", "Edit", "Ls", "Grep", "Find"]) {
  agent[`create${name}ToolDefinition`] = (...args) => piTools()[`create${name}Tool`](...args);
}
for (const name of AGENT_ONLY) if (!(name in agent)) agent[name] = unavailable(name);
module.exports = agent;

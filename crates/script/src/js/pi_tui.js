// The built-in `@mariozechner/pi-tui` (also under `@oh-my-pi/` and `@earendil-works/`): the
// components tools render with — Text, TruncatedText, Container, Box, Spacer, Markdown — and the
// text helpers, mapped onto toolhost's declarative render tree: a component returned from a
// render hook becomes its lines, styles kept, and the UI draws and wraps them. Interactive
// components (editors, inputs, lists, the TUI itself) are named so that imports resolve, and
// throw a clear error when used: custom tools cannot take over the terminal.
const styled = require("toolhost:text");
const LINES = Symbol.for("toolhost.renderLines");

const padLines = (lines, paddingX, paddingY, bg) => {
  const indent = " ".repeat(Math.max(0, paddingX | 0));
  const body = lines.map((line) => (bg ? bg(indent + line) : indent + line));
  const blank = Array.from({ length: Math.max(0, paddingY | 0) }, () => "");
  return [...blank, ...body, ...blank];
};
const linesOf = (component) => {
  if (component && typeof component[LINES] === "function") return component[LINES]();
  if (component && typeof component.render === "function") return component.render(80);
  return [];
};

class Text {
  constructor(text = "", paddingX = 1, paddingY = 1, customBgFn) {
    this.text = String(text);
    this.paddingX = paddingX;
    this.paddingY = paddingY;
    this.customBgFn = customBgFn;
  }
  setText(text) { this.text = String(text); }
  setCustomBgFn(fn) { this.customBgFn = fn; }
  invalidate() {}
  [LINES]() { return this.text === "" ? [] : padLines(styled.splitLines(this.text), this.paddingX, this.paddingY, this.customBgFn); }
  render(width) {
    if (this.text === "") return [];
    const lines = styled.wrap(this.text, Math.max(1, width - 2 * this.paddingX));
    return padLines(lines, this.paddingX, this.paddingY, this.customBgFn);
  }
}
class TruncatedText {
  constructor(text = "", paddingX = 0, paddingY = 0) { this.text = String(text); this.paddingX = paddingX; this.paddingY = paddingY; }
  setText(text) { this.text = String(text); }
  invalidate() {}
  [LINES]() { return padLines([styled.splitLines(this.text)[0]], this.paddingX, this.paddingY); }
  render(width) { return padLines([styled.truncateToWidth(styled.splitLines(this.text)[0], Math.max(1, width - 2 * this.paddingX))], this.paddingX, this.paddingY); }
}
class Spacer {
  constructor(lines = 1) { this.lines = lines; }
  setLines(lines) { this.lines = lines; }
  invalidate() {}
  [LINES]() { return Array.from({ length: Math.max(0, this.lines | 0) }, () => ""); }
  render() { return this[LINES](); }
}
class Container {
  constructor() { this.children = []; }
  addChild(child) { this.children.push(child); }
  removeChild(child) { this.children = this.children.filter((item) => item !== child); }
  clear() { this.children = []; }
  invalidate() { for (const child of this.children) if (child && typeof child.invalidate === "function") child.invalidate(); }
  [LINES]() { return this.children.flatMap(linesOf); }
  render(width) { return this.children.flatMap((child) => (child && typeof child.render === "function" ? child.render(width) : [])); }
}
class Box extends Container {
  constructor(paddingX = 1, paddingY = 1, bgFn) { super(); this.paddingX = paddingX; this.paddingY = paddingY; this.bgFn = bgFn; }
  setBgFn(fn) { this.bgFn = fn; }
  [LINES]() { return padLines(super[LINES](), this.paddingX, this.paddingY, this.bgFn); }
  render(width) { return padLines(super.render(Math.max(1, width - 2 * this.paddingX)), this.paddingX, this.paddingY, this.bgFn); }
}
// Markdown as lines: headings, emphasis and code styled through the theme when given.
class Markdown {
  constructor(text = "", paddingX = 1, paddingY = 1, theme, defaultTextStyle) {
    this.text = String(text);
    this.paddingX = paddingX;
    this.paddingY = paddingY;
    this.theme = theme;
    this.defaultTextStyle = defaultTextStyle;
  }
  setText(text) { this.text = String(text); }
  invalidate() {}
  #styled() {
    const theme = this.theme ?? {};
    const use = (name, fallback) => (typeof theme[name] === "function" ? (text) => theme[name](text) : fallback);
    const heading = use("heading", (text) => styled.style("fg:accent;bold", text));
    const bold = use("bold", (text) => styled.style("bold", text));
    const italic = use("italic", (text) => styled.style("italic", text));
    const code = use("code", (text) => styled.style("fg:accent", text));
    const codeBlock = use("codeBlock", (text) => styled.style("fg:muted", text));
    let fenced = false;
    return styled.splitLines(this.text).flatMap((line) => {
      if (/^\s*```/.test(line)) { fenced = !fenced; return []; }
      if (fenced) return [codeBlock(line)];
      const title = /^(#{1,6})\s+(.*)$/.exec(line);
      if (title) return [heading(title[2])];
      return [line
        .replace(/\*\*([^*]+)\*\*/g, (_, text) => bold(text))
        .replace(/(^|[^*])\*([^*]+)\*/g, (_, before, text) => before + italic(text))
        .replace(/`([^`]+)`/g, (_, text) => code(text))];
    });
  }
  [LINES]() { return this.text === "" ? [] : padLines(this.#styled(), this.paddingX, this.paddingY); }
  render(width) { return this.text === "" ? [] : padLines(this.#styled().flatMap((line) => styled.wrap(line, Math.max(1, width - 2 * this.paddingX))), this.paddingX, this.paddingY); }
}

const fuzzyMatch = (query, text) => {
  const q = String(query).toLowerCase(), t = String(text).toLowerCase();
  let at = 0, score = 0;
  for (const char of q) {
    const found = t.indexOf(char, at);
    if (found === -1) return { matches: false, score: 0 };
    score += found === at ? 2 : 1;
    at = found + 1;
  }
  return { matches: true, score };
};
const fuzzyFilter = (items, query, getText = String) => items
  .map((item) => ({ item, match: fuzzyMatch(query, getText(item)) }))
  .filter(({ match }) => match.matches)
  .sort((a, b) => b.match.score - a.match.score)
  .map(({ item }) => item);
const keyName = (prefix) => (key) => `${prefix}+${key}`;
// `Key.enter` is the key's name; `Key.ctrl("c")`, `Key.ctrlAlt("p")`, `Key.shiftAlt(…)` name a
// key with its modifiers, whatever their order.
const MODIFIERS = /^(ctrl|alt|shift|meta|super)((Ctrl|Alt|Shift|Meta|Super)*)$/;
const Key = new Proxy({}, {
  get: (target, name) => {
    if (typeof name !== "string") return undefined;
    if (name in target) return target[name];
    if (MODIFIERS.test(name)) return keyName(name.replace(/[A-Z]/g, (letter) => `+${letter.toLowerCase()}`));
    return name;
  },
});

const unavailable = (name) => function () {
  throw new Error(`pi-tui's ${name} is an interactive terminal component, which custom tools in toolhost cannot use: return Text, Container, Markdown or Spacer from a render hook instead`);
};
const INTERACTIVE = ["CancellableLoader", "CombinedAutocompleteProvider", "Editor", "EditorKeybindingsManager", "Image", "Input", "Loader", "ProcessTerminal", "SelectList", "SettingsList", "StdinBuffer", "TUI", "TabBar", "allocateImageId", "calculateImageRows", "decodeKittyPrintable", "deleteAllKittyImages", "deleteKittyImage", "detectCapabilities", "emergencyTerminalRestore", "encodeITerm2", "encodeKitty", "getCapabilities", "getCellDimensions", "getEditorKeybindings", "getGifDimensions", "getImageDimensions", "getJpegDimensions", "getPngDimensions", "getWebpDimensions", "imageFallback", "parseKittySequence", "renderImage", "resetCapabilitiesCache", "setCellDimensions", "setEditorKeybindings", "setKittyProtocolActive"];
const tui = {
  Text, TruncatedText, Spacer, Container, Box, Markdown,
  visibleWidth: styled.visibleWidth,
  // Text without its styling (ANSI escapes, or toolhost's own style marks).
  stripTerminalSequences: (text) => styled.plain(String(text).replace(/\x1b\[[0-9;?]*[ -\/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)/g, "")),
  truncateToWidth: styled.truncateToWidth,
  wrapTextWithAnsi: styled.wrap,
  fuzzyMatch, fuzzyFilter,
  Key,
  matchesKey: () => false,
  parseKey: () => undefined,
  isKeyRelease: () => false,
  isKeyRepeat: () => false,
  isKittyProtocolActive: () => false,
  isFocusable: (component) => Boolean(component && "focused" in component),
  CURSOR_MARKER: "",
  DEFAULT_EDITOR_KEYBINDINGS: Object.freeze({}),
};
for (const name of INTERACTIVE) tui[name] = unavailable(name);
module.exports = tui;

// `toolhost:text`: styled text as a string, so that pi-shaped render code can concatenate it
// (`theme.fg("accent", a) + theme.bold(b)`) and toolhost can still turn it into the declarative
// render tree. A styled run is `\uE000spec\uE001text\uE002` (private-use characters; `spec` is
// `fg:accent;bold`, nested runs inherit); ANSI SGR colours that libraries write are read too.
// Nothing here reaches the terminal: `api.js` decodes the text into spans.
const OPEN = "\uE000", SEP = "\uE001", CLOSE = "\uE002";
const ANSI_NAMES = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"];
const FLAGS = ["bold", "italic", "underline", "dim"];

const style = (spec, text) => `${OPEN}${spec}${SEP}${text}${CLOSE}`;
const apply = (base, spec) => {
  const next = { ...base };
  for (const part of spec.split(";")) {
    const [key, value] = part.split(":");
    if (key === "fg" || key === "bg") next[key] = value;
    else if (FLAGS.includes(key)) next[key] = true;
  }
  return next;
};
const sgr = (current, base, codes) => {
  const next = { ...current };
  const list = codes === "" ? [0] : codes.split(";").map(Number);
  for (let i = 0; i < list.length; i++) {
    const code = list[i];
    if (code === 0) { for (const key of Object.keys(next)) delete next[key]; Object.assign(next, base); }
    else if (code === 1) next.bold = true;
    else if (code === 2) next.dim = true;
    else if (code === 3) next.italic = true;
    else if (code === 4) next.underline = true;
    else if (code === 22) { delete next.bold; delete next.dim; }
    else if (code === 23) delete next.italic;
    else if (code === 24) delete next.underline;
    else if (code >= 30 && code <= 37) next.fg = ANSI_NAMES[code - 30];
    else if (code >= 90 && code <= 97) next.fg = ANSI_NAMES[code - 90];
    else if (code >= 40 && code <= 47) next.bg = ANSI_NAMES[code - 40];
    else if (code === 39) delete next.fg;
    else if (code === 49) delete next.bg;
    else if ((code === 38 || code === 48) && list[i + 1] === 2) {
      const hex = list.slice(i + 2, i + 5).map((n) => (n & 255).toString(16).padStart(2, "0")).join("");
      next[code === 38 ? "fg" : "bg"] = `#${hex}`;
      i += 4;
    } else if ((code === 38 || code === 48) && list[i + 1] === 5) i += 2;
  }
  return next;
};

// The runs of `text`: [{ text, fg?, bg?, bold?, ... }], styles of `base` underneath.
function spans(text, base = {}) {
  const out = [];
  const stack = [{ ...base }];
  let current = "";
  const top = () => stack[stack.length - 1];
  const flush = () => { if (current !== "") { out.push({ ...top(), text: current }); current = ""; } };
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === OPEN) {
      const end = text.indexOf(SEP, i);
      if (end === -1) continue;
      flush();
      stack.push(apply(top(), text.slice(i + 1, end)));
      i = end;
    } else if (c === CLOSE) {
      flush();
      if (stack.length > 1) stack.pop();
    } else if (c === "\u001b" && text[i + 1] === "[") {
      const match = /^\u001b\[([0-9;]*)m/.exec(text.slice(i, i + 32));
      if (!match) { current += c; continue; }
      flush();
      stack[stack.length - 1] = sgr(top(), stack[0], match[1]);
      i += match[0].length - 1;
    } else current += c;
  }
  flush();
  return out;
}
const specOf = (span) => [
  ...(span.fg ? [`fg:${span.fg}`] : []),
  ...(span.bg ? [`bg:${span.bg}`] : []),
  ...FLAGS.filter((flag) => span[flag]),
].join(";");
const serialize = (list) => list.map((span) => { const spec = specOf(span); return spec ? style(spec, span.text) : span.text; }).join("");

const isWide = (code) => (code >= 0x1100 && code <= 0x115f) || (code >= 0x2e80 && code <= 0xa4cf) || (code >= 0xac00 && code <= 0xd7a3) || (code >= 0xf900 && code <= 0xfaff) || (code >= 0xfe30 && code <= 0xfe4f) || (code >= 0xff00 && code <= 0xff60) || (code >= 0x1f300 && code <= 0x1faff) || (code >= 0x20000 && code <= 0x3fffd);
const charWidth = (char) => {
  const code = char.codePointAt(0);
  if (code < 32 || (code >= 0x300 && code <= 0x36f) || code === 0x200b || (code >= 0xfe00 && code <= 0xfe0f)) return 0;
  return isWide(code) ? 2 : 1;
};
// A styled string's lines, each a styled string of its own (a run may span lines).
const splitLines = (text) => {
  const lines = [[]];
  for (const span of spans(String(text))) {
    span.text.split("\n").forEach((part, index) => {
      if (index > 0) lines.push([]);
      if (part !== "") lines[lines.length - 1].push({ ...span, text: part });
    });
  }
  return lines.map(serialize);
};
const plain = (text) => spans(String(text)).map((span) => span.text).join("");
const visibleWidth = (text) => { let width = 0; for (const char of plain(text)) width += charWidth(char); return width; };

function truncateToWidth(text, maxWidth, ellipsis = "...", pad = false) {
  const source = String(text);
  if (visibleWidth(source) <= maxWidth) return pad ? source + " ".repeat(Math.max(0, maxWidth - visibleWidth(source))) : source;
  const room = Math.max(0, maxWidth - visibleWidth(ellipsis));
  const kept = [];
  let width = 0;
  for (const span of spans(source)) {
    let piece = "";
    for (const char of span.text) {
      const w = charWidth(char);
      if (width + w > room) break;
      piece += char;
      width += w;
    }
    if (piece) kept.push({ ...span, text: piece });
    if (piece.length < span.text.length) break;
  }
  const out = serialize(kept) + ellipsis;
  return pad ? out + " ".repeat(Math.max(0, maxWidth - width - visibleWidth(ellipsis))) : out;
}

// Wraps each line at word boundaries (long words are cut) without losing styles.
function wrap(text, width) {
  const lines = [];
  for (const line of splitLines(text)) {
    if (!Number.isFinite(width) || width <= 0 || visibleWidth(line) <= width) { lines.push(line); continue; }
    let row = [];
    let rowWidth = 0;
    const push = () => { lines.push(serialize(row).replace(/\s+$/, "")); row = []; rowWidth = 0; };
    for (const span of spans(line)) {
      for (const word of span.text.split(/(\s+)/)) {
        if (word === "") continue;
        let rest = word;
        while (rest !== "") {
          const w = visibleWidth(rest);
          if (rowWidth + w <= width) { row.push({ ...span, text: rest }); rowWidth += w; break; }
          if (/^\s+$/.test(rest)) { push(); break; }
          if (w <= width && rowWidth > 0) { push(); continue; }
          let cut = "";
          for (const char of rest) { if (rowWidth + visibleWidth(cut + char) > width) break; cut += char; }
          if (cut === "") { push(); continue; }
          row.push({ ...span, text: cut });
          rest = rest.slice(cut.length);
          push();
        }
      }
    }
    if (row.length > 0) push();
  }
  return lines;
}

// pi's theme colour names, as the roles toolhost's UI knows; other names pass through.
const ROLES = { toolTitle: "accent", toolOutput: "text", border: "muted", borderAccent: "accent", borderMuted: "muted", dim: "muted", thinkingText: "muted", mdHeading: "accent", mdLink: "accent", mdLinkUrl: "muted", mdCode: "accent", mdCodeBlock: "muted", mdQuote: "muted", mdListBullet: "accent", customMessageLabel: "accent", userMessageText: "text", toolDiffAdded: "success", toolDiffRemoved: "error" };
const role = (name) => ROLES[name] ?? name;
// A theme for render code: colours by role, and helpers that make styled text.
const theme = (base = {}) => Object.freeze({
  ...base,
  fg: (color, text) => style(`fg:${role(String(color))}`, String(text)),
  bg: (color, text) => style(`bg:${role(String(color))}`, String(text)),
  bold: (text) => style("bold", String(text)),
  italic: (text) => style("italic", String(text)),
  underline: (text) => style("underline", String(text)),
  dim: (text) => style("dim", String(text)),
  strikethrough: (text) => String(text),
  inverse: (text) => String(text),
  getFgAnsi: () => "",
  getBgAnsi: () => "",
});

module.exports = { style, spans, serialize, splitLines, plain, visibleWidth, truncateToWidth, wrap, theme, OPEN, SEP, CLOSE };

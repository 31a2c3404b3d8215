// pi-coding-agent's edit helpers that extensions wrapping edits use: a line diff as pi shows it
// (`generateDiffString`), a unified patch (`generateUnifiedPatch`), one queue of writes per
// file (`withFileMutationQueue`). The diff is a longest-common-subsequence of lines; past
// MAX_CELLS of work it shows the whole old text removed and the new one added.
const MAX_CELLS = 4_000_000;

// The lines of both texts as one list of kept (" "), removed ("-") and added ("+") lines,
// each with its line number in the old and the new text.
function diffLines(oldText, newText) {
  const a = String(oldText).split("\n");
  const b = String(newText).split("\n");
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start += 1;
  let endA = a.length, endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) { endA -= 1; endB -= 1; }
  const midA = a.slice(start, endA), midB = b.slice(start, endB);
  const middle = [];
  if (midA.length * midB.length > MAX_CELLS) {
    for (const line of midA) middle.push(["-", line]);
    for (const line of midB) middle.push(["+", line]);
  } else {
    // lengths[i][j]: the longest common run of midA[i..] and midB[j..].
    const lengths = Array.from({ length: midA.length + 1 }, () => new Uint32Array(midB.length + 1));
    for (let i = midA.length - 1; i >= 0; i -= 1) {
      for (let j = midB.length - 1; j >= 0; j -= 1) {
        lengths[i][j] = midA[i] === midB[j] ? lengths[i + 1][j + 1] + 1 : Math.max(lengths[i + 1][j], lengths[i][j + 1]);
      }
    }
    let i = 0, j = 0;
    while (i < midA.length || j < midB.length) {
      if (i < midA.length && j < midB.length && midA[i] === midB[j]) { middle.push([" ", midA[i]]); i += 1; j += 1; }
      // Removed lines before added ones, as diffs show them.
      else if (i < midA.length && (j === midB.length || lengths[i + 1][j] >= lengths[i][j + 1])) { middle.push(["-", midA[i]]); i += 1; }
      else { middle.push(["+", midB[j]]); j += 1; }
    }
  }
  const ops = [...a.slice(0, start).map((line) => [" ", line]), ...middle, ...a.slice(endA).map((line) => [" ", line])];
  let oldNo = 0, newNo = 0;
  return ops.map(([kind, line]) => {
    if (kind !== "+") oldNo += 1;
    if (kind !== "-") newNo += 1;
    return { kind, line, oldNo, newNo };
  });
}

// The runs of changed lines with `context` kept lines around them.
function hunks(ops, context) {
  const changed = ops.map((op, index) => (op.kind === " " ? -1 : index)).filter((index) => index >= 0);
  const groups = [];
  for (const index of changed) {
    const from = Math.max(0, index - context), to = Math.min(ops.length - 1, index + context);
    const last = groups[groups.length - 1];
    if (last && from <= last.to + 1) last.to = Math.max(last.to, to);
    else groups.push({ from, to });
  }
  return groups;
}

function generateDiffString(oldContent, newContent, contextLines = 4) {
  const ops = diffLines(oldContent, newContent);
  const width = String(Math.max(ops.length ? ops[ops.length - 1].oldNo : 0, ops.length ? ops[ops.length - 1].newNo : 0)).length;
  const output = [];
  let firstChangedLine;
  for (const [number, group] of hunks(ops, contextLines).entries()) {
    if (number > 0 || group.from > 0) output.push(`${" ".repeat(width + 1)} ...`);
    for (const op of ops.slice(group.from, group.to + 1)) {
      // In the new text: a removed line's place is the line after the last kept one.
      if (op.kind !== " " && firstChangedLine === undefined) firstChangedLine = op.kind === "-" ? op.newNo + 1 : op.newNo;
      const shown = op.kind === "-" ? op.oldNo : op.newNo;
      output.push(`${op.kind}${String(shown).padStart(width)} ${op.line}`);
    }
  }
  return { diff: output.join("\n"), firstChangedLine };
}

function generateUnifiedPatch(path, oldContent, newContent, contextLines = 3) {
  const ops = diffLines(oldContent, newContent);
  const lines = [`--- a/${path}`, `+++ b/${path}`];
  for (const group of hunks(ops, contextLines)) {
    const part = ops.slice(group.from, group.to + 1);
    const oldCount = part.filter((op) => op.kind !== "+").length;
    const newCount = part.filter((op) => op.kind !== "-").length;
    const oldStart = part.find((op) => op.kind !== "+")?.oldNo ?? part[0].oldNo;
    const newStart = part.find((op) => op.kind !== "-")?.newNo ?? part[0].newNo;
    lines.push(`@@ -${oldCount === 0 ? oldStart : oldStart},${oldCount} +${newStart},${newCount} @@`);
    for (const op of part) lines.push(`${op.kind}${op.line}`);
  }
  return `${lines.join("\n")}\n`;
}

// Writes to one file run one after the other, in the order they were queued.
const queues = new Map();
function withFileMutationQueue(path, mutate) {
  const key = String(path);
  const previous = queues.get(key) ?? Promise.resolve();
  const next = previous.catch(() => {}).then(() => mutate());
  queues.set(key, next);
  next.finally(() => { if (queues.get(key) === next) queues.delete(key); }).catch(() => {});
  return next;
}

module.exports = { generateDiffString, generateUnifiedPatch, withFileMutationQueue };

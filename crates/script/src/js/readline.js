// The built-in `node:readline`: `createInterface({ input })` over a stream that emits `data`
// and `end` (a file's `createReadStream`, a child's `stdout`), giving its lines as `line`
// events and as an async iterator, as Node does. There is no terminal to ask: `question`
// answers nothing.
const EventEmitter = require("node:events");

function createInterface(options) {
  const input = options && options.input !== undefined ? options.input : options;
  if (!input || typeof input.on !== "function") throw new TypeError("readline.createInterface needs an input stream (options.input) that emits 'data' and 'end'");
  const rl = new EventEmitter();
  const queued = [];
  const waiting = [];
  let rest = "";
  let closed = false;
  let failure = null;
  const deliver = (line) => {
    rl.emit("line", line);
    const next = waiting.shift();
    if (next) next.resolve({ value: line, done: false });
    else queued.push(line);
  };
  const close = () => {
    if (closed) return;
    closed = true;
    rl.emit("close");
    for (const next of waiting.splice(0)) next.resolve({ value: undefined, done: true });
  };
  input.on("data", (chunk) => {
    rest += typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk);
    const lines = rest.split(/\r?\n/);
    rest = lines.pop();
    for (const line of lines) if (!closed) deliver(line);
  });
  input.on("end", () => {
    if (rest !== "" && !closed) deliver(rest);
    rest = "";
    close();
  });
  // A failed input (a read the rules refused) ends the lines with its error: `for await`
  // rejects with it, and `error` listeners hear it.
  input.on("error", (error) => {
    failure = error;
    if (rl.listenerCount("error") > 0) rl.emit("error", error);
    for (const next of waiting.splice(0)) next.reject(error);
    close();
  });
  rl.close = close;
  rl.pause = () => rl;
  rl.resume = () => rl;
  rl.setPrompt = () => {};
  rl.prompt = () => {};
  rl.write = () => {};
  rl.question = (_query, optionsOrCallback, callback) => {
    const answer = typeof optionsOrCallback === "function" ? optionsOrCallback : callback;
    if (answer) queueMicrotask(() => answer(""));
  };
  rl[Symbol.asyncIterator] = () => ({
    next: () => {
      if (queued.length > 0) return Promise.resolve({ value: queued.shift(), done: false });
      if (failure) return Promise.reject(failure);
      if (closed) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
    return: () => { close(); return Promise.resolve({ value: undefined, done: true }); },
    [Symbol.asyncIterator]() { return this; },
  });
  return rl;
}

module.exports = { createInterface, Interface: EventEmitter, emitKeypressEvents: () => {}, clearLine: () => true, cursorTo: () => true, moveCursor: () => true, clearScreenDown: () => true };

// Preloaded (`node --require`) into reference servers that toolhost's tests run over HTTP:
// whatever address the program asks for, every server it starts listens on 127.0.0.1 only
// (server-everything's `sse` and `streamableHttp` transports listen on every interface, with
// no option to change that). Each server then prints the port it got on stderr, so that a test
// can ask for port 0 and learn which free port it has.
"use strict";
const net = require("node:net");

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const callback = typeof args[args.length - 1] === "function" ? args.pop() : undefined;
  const first = args[0];
  const port = typeof first === "object" && first !== null ? first.port : Number(first ?? 0);
  this.once("listening", () => {
    process.stderr.write(`toolhost-test: listening on 127.0.0.1:${this.address().port}\n`);
  });
  return listen.call(this, { port, host: "127.0.0.1" }, callback);
};

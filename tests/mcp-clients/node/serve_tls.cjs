// Preloaded (`node --require`, after listen_loopback.cjs) into a reference server that a test
// reaches over HTTPS: every HTTP server the program creates becomes an HTTPS server with the
// certificate and key named by TOOLHOST_TEST_TLS_CERT and TOOLHOST_TEST_TLS_KEY (PEM files).
"use strict";
const fs = require("node:fs");
const http = require("node:http");
const https = require("node:https");

const tls = {
  cert: fs.readFileSync(process.env.TOOLHOST_TEST_TLS_CERT),
  key: fs.readFileSync(process.env.TOOLHOST_TEST_TLS_KEY),
};
http.createServer = (...args) => {
  const options = typeof args[0] === "object" && args[0] !== null ? args.shift() : {};
  return https.createServer({ ...options, ...tls }, ...args);
};

#!/usr/bin/env python3
"""A logging proxy on 127.0.0.1 in front of one model endpoint, so every agent is counted alike.

Each agent run gets its own base URL, http://127.0.0.1:PORT/r/RUN_ID/..., and the proxy forwards
the rest of the path to the upstream (`--upstream http://127.0.0.1:8091`, or any OpenAI-compatible
or Anthropic host, a path prefix included: `https://openrouter.ai/api`). For every request it
appends one JSON line to LOG_DIR/RUN_ID.jsonl: the request body as sent upstream, the status,
the answer put together from the stream (text, tool calls with their raw arguments) and the token
counts the server gave. It makes the runs comparable by rewriting, in every body alike, the
sampling temperature (`--temperature`) and a cap on the output tokens (`--max-tokens`), and it
answers a run's request number `--max-requests + 1` with an error instead of forwarding it (the
evaluation's loop limit, the same for every agent).

Only the standard library; one upstream request at a time per client connection.
"""

import argparse
import http.client
import http.server
import json
import os
import sys
import threading
import time
import urllib.parse

LIMIT_MESSAGE = "model_eval proxy: request limit of this run reached"


def rewrite_body(body, args, path):
    """Applies the evaluation's sampling settings to one request body (both wire formats)."""
    if args.temperature is not None:
        body["temperature"] = args.temperature
    if args.max_tokens:
        for key in ("max_tokens", "max_completion_tokens"):
            if key in body:
                body[key] = min(int(body[key] or args.max_tokens), args.max_tokens)
        if "max_tokens" not in body and "max_completion_tokens" not in body:
            body["max_tokens"] = args.max_tokens
    if body.get("stream") and path.endswith("/chat/completions"):
        # OpenAI chat completions: ask for the usage chunk (llama.cpp sends timings anyway).
        body.setdefault("stream_options", {"include_usage": True})
    return body


class Assembler:
    """Puts an answer together from an OpenAI or Anthropic response, streamed or not."""

    def __init__(self):
        self.text = ""
        self.calls = {}  # index -> {"name", "arguments"}
        self.usage = {}
        self.finish = None

    def call(self, index):
        return self.calls.setdefault(index, {"name": "", "arguments": ""})

    def feed_event(self, event):
        if not isinstance(event, dict):
            return
        # OpenAI chat completions chunk or whole response
        for choice in event.get("choices") or []:
            part = choice.get("delta") or choice.get("message") or {}
            self.text += part.get("content") or ""
            for n, tc in enumerate(part.get("tool_calls") or []):
                slot = self.call(tc.get("index", n))
                fn = tc.get("function") or {}
                slot["name"] += fn.get("name") or ""
                slot["arguments"] += fn.get("arguments") or ""
            self.finish = choice.get("finish_reason") or self.finish
        if event.get("usage"):
            usage = event["usage"]
            for key, value in usage.items():
                if isinstance(value, (int, float)):
                    self.usage[key] = value
        if event.get("timings"):
            timings = event["timings"]
            self.usage["cache_n"] = timings.get("cache_n", self.usage.get("cache_n"))
            self.usage["prompt_n"] = timings.get("prompt_n")
            self.usage["predicted_n"] = timings.get("predicted_n")
        # Anthropic messages
        kind = event.get("type")
        if kind == "message_start":
            for key, value in (event.get("message", {}).get("usage") or {}).items():
                if isinstance(value, (int, float)):
                    self.usage[key] = value
        elif kind == "content_block_start":
            block = event.get("content_block") or {}
            if block.get("type") == "tool_use":
                self.call(event.get("index", 0))["name"] = block.get("name", "")
            elif block.get("type") == "text":
                self.text += block.get("text") or ""
        elif kind == "content_block_delta":
            delta = event.get("delta") or {}
            if delta.get("type") == "text_delta":
                self.text += delta.get("text") or ""
            elif delta.get("type") == "input_json_delta":
                self.call(event.get("index", 0))["arguments"] += delta.get("partial_json") or ""
        elif kind == "message_delta":
            for key, value in (event.get("usage") or {}).items():
                if isinstance(value, (int, float)):
                    self.usage[key] = value
            self.finish = (event.get("delta") or {}).get("stop_reason") or self.finish
        elif kind == "message" and isinstance(event.get("content"), list):
            for n, block in enumerate(event["content"]):
                if block.get("type") == "text":
                    self.text += block.get("text", "")
                elif block.get("type") == "tool_use":
                    self.calls[n] = {"name": block.get("name", ""), "arguments": json.dumps(block.get("input"))}
            for key, value in (event.get("usage") or {}).items():
                if isinstance(value, (int, float)):
                    self.usage[key] = value

    def summary(self):
        return {
            "text": self.text,
            "tool_calls": [self.calls[k] for k in sorted(self.calls)],
            "usage": self.usage,
            "finish": self.finish,
        }


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "model-eval-proxy"

    def log_message(self, *_):  # the JSON log is the record; no access log on stderr
        pass

    def split_run(self):
        parts = self.path.split("/", 3)  # '', 'r', RUN, rest
        if len(parts) >= 3 and parts[1] == "r" and parts[2]:
            return parts[2], "/" + (parts[3] if len(parts) > 3 else "")
        return "no-run", self.path

    def do_GET(self):
        self.forward(None)

    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        self.forward(self.rfile.read(length))

    def send_json(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def forward(self, raw):
        cfg = self.server.cfg
        run, rest = self.split_run()
        with self.server.lock:
            count = self.server.counts.get(run, 0) + (1 if raw is not None else 0)
            self.server.counts[run] = count
        record = {"n": count, "path": rest, "t_start": time.time()}
        body = None
        if raw is not None:
            try:
                body = rewrite_body(json.loads(raw), cfg, rest)
            except ValueError:
                body = None
            record["request"] = body
            if cfg.max_requests and count > cfg.max_requests:
                record.update(status=400, limit=True, t_end=time.time())
                self.write_log(run, record)
                self.send_json(400, {"error": {"message": LIMIT_MESSAGE, "type": "invalid_request_error"},
                                     "type": "error"})
                return
        upstream = cfg.upstream_parts
        conn_cls = http.client.HTTPSConnection if upstream.scheme == "https" else http.client.HTTPConnection
        conn = conn_cls(upstream.hostname, upstream.port, timeout=cfg.timeout)
        headers = {k: v for k, v in self.headers.items()
                   if k.lower() not in ("host", "content-length", "connection", "accept-encoding")}
        if cfg.api_key:
            headers.pop("authorization", None)
            headers.pop("Authorization", None)
            headers["Authorization"] = f"Bearer {cfg.api_key}"
            headers["x-api-key"] = cfg.api_key
        data = json.dumps(body).encode() if body is not None else raw
        assembler = Assembler()
        try:
            conn.request(self.command, upstream.path.rstrip("/") + rest, body=data, headers=headers)
            resp = conn.getresponse()
            record["status"] = resp.status
            self.send_response(resp.status)
            for k, v in resp.getheaders():
                if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(k, v)
            self.send_header("transfer-encoding", "chunked")
            self.end_headers()
            streamed = "event-stream" in (resp.getheader("content-type") or "")
            whole = b""
            while True:
                line = resp.readline() if streamed else resp.read(65536)
                if not line:
                    break
                self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                self.wfile.flush()
                if streamed:
                    text = line.decode("utf-8", "replace").strip()
                    if text.startswith("data:") and text[5:].strip() not in ("", "[DONE]"):
                        try:
                            assembler.feed_event(json.loads(text[5:]))
                        except ValueError:
                            pass
                else:
                    whole += line
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
            if not streamed and whole:
                try:
                    assembler.feed_event(json.loads(whole))
                except ValueError:
                    record["raw_response"] = whole[:4000].decode("utf-8", "replace")
        except (OSError, http.client.HTTPException) as err:
            record["error"] = repr(err)
            try:
                self.send_json(502, {"error": {"message": f"model_eval proxy: upstream failed: {err}"}})
            except OSError:
                pass
        finally:
            conn.close()
        record["response"] = assembler.summary()
        record["t_end"] = time.time()
        self.write_log(run, record)

    def write_log(self, run, record):
        path = os.path.join(self.server.cfg.log_dir, f"{run}.jsonl")
        with self.server.lock, open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--upstream", required=True, help="model host, e.g. http://127.0.0.1:8091")
    ap.add_argument("--log-dir", required=True)
    ap.add_argument("--port", type=int, default=0, help="0: any free port (written to --port-file)")
    ap.add_argument("--port-file")
    ap.add_argument("--temperature", type=float, default=0.0)
    ap.add_argument("--max-tokens", type=int, default=1024)
    ap.add_argument("--max-requests", type=int, default=12, help="per run; 0: no limit")
    ap.add_argument("--timeout", type=float, default=900)
    ap.add_argument("--api-key-env", help="variable holding the upstream key (replaces the agents' dummy keys)")
    cfg = ap.parse_args()
    cfg.upstream_parts = urllib.parse.urlsplit(cfg.upstream)
    if cfg.upstream_parts.scheme not in ("http", "https") or not cfg.upstream_parts.hostname:
        sys.exit(f"--upstream must be an http(s) URL, got {cfg.upstream!r}")
    cfg.api_key = os.environ.get(cfg.api_key_env, "") if cfg.api_key_env else ""
    os.makedirs(cfg.log_dir, exist_ok=True)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", cfg.port), Handler)
    server.cfg, server.lock, server.counts = cfg, threading.Lock(), {}
    if cfg.port_file:
        with open(cfg.port_file, "w") as f:
            f.write(str(server.server_address[1]))
    server.serve_forever()


if __name__ == "__main__":
    main()

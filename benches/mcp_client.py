"""A raw JSON-RPC MCP client over stdio, the same for every server measured by mcp_bench.sh.

Usage: mcp_client.py NAME READ_TOOL PATH_ARG FILE -- COMMAND...

Measures, for the server started by COMMAND (one fresh process per measurement of start-up):
- cold start: spawn to the `initialize` response (median of 10 starts);
- latency of one small Read, one call at a time (p50, p99 over 1000 calls);
- calls per second with 8 calls in flight (4000 calls);
- server CPU per call in that phase (utime + stime from /proc, in microseconds);
- peak RSS of the server (VmHWM), in MiB.
Prints one JSON object.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}
TICKS = os.sysconf("SC_CLK_TCK")


class Server:
    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0
        )
        self.reader = self.process.stdout
        self.buffer = b""
        self.next_id = 1

    def send(self, message: dict) -> None:
        self.process.stdin.write(json.dumps(message).encode() + b"\n")

    def receive(self) -> dict:
        while b"\n" not in self.buffer:
            chunk = os.read(self.reader.fileno(), 1 << 20)
            if not chunk:
                raise RuntimeError("server closed stdout")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def response(self) -> dict:
        while True:
            message = self.receive()
            if "id" in message and ("result" in message or "error" in message):
                return message

    def initialize(self) -> dict:
        self.send(INITIALIZE)
        reply = self.response()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return reply

    def call(self, tool: str, arguments: dict) -> int:
        request_id = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": tool, "arguments": arguments}})
        return request_id

    def cpu_seconds(self) -> float:
        fields = open(f"/proc/{self.process.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICKS

    def peak_rss_mib(self) -> float:
        for line in open(f"/proc/{self.process.pid}/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        self.process.stdin.close()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def main() -> None:
    name, tool, path_arg, file = sys.argv[1:5]
    command = sys.argv[sys.argv.index("--") + 1 :]
    arguments = {path_arg: file}

    starts = []
    for _ in range(10):
        started = time.perf_counter()
        server = Server(command)
        server.initialize()
        starts.append(time.perf_counter() - started)
        server.close()

    server = Server(command)
    server.initialize()
    reply = None
    server.call(tool, arguments)
    reply = server.response()
    result = reply.get("result", {})
    if reply.get("error") or result.get("isError"):
        raise SystemExit(f"{name}: the Read call failed: {reply}")

    for _ in range(100):  # warm-up
        server.call(tool, arguments)
        server.response()
    latencies = []
    for _ in range(1000):
        started = time.perf_counter()
        server.call(tool, arguments)
        server.response()
        latencies.append(time.perf_counter() - started)
    latencies.sort()

    total, in_flight = 4000, 8
    cpu_before = server.cpu_seconds()
    started = time.perf_counter()
    sent = 0
    for _ in range(in_flight):
        server.call(tool, arguments)
        sent += 1
    for _ in range(total):
        server.response()
        if sent < total:
            server.call(tool, arguments)
            sent += 1
    elapsed = time.perf_counter() - started
    cpu = server.cpu_seconds() - cpu_before
    peak = server.peak_rss_mib()
    server.close()

    print(
        json.dumps(
            {
                "server": name,
                "cold_start_ms": round(statistics.median(starts) * 1000, 2),
                "read_p50_us": round(latencies[len(latencies) // 2] * 1e6),
                "read_p99_us": round(latencies[int(len(latencies) * 0.99)] * 1e6),
                "calls_per_s_8_in_flight": round(total / elapsed),
                "server_cpu_us_per_call": round(cpu / total * 1e6, 1),
                "peak_rss_mib": round(peak, 1),
            }
        )
    )


if __name__ == "__main__":
    main()

"""The gateway's cost: an MCP server alone against the same server behind `toolhost serve`.

Usage: mcp_gateway.py ROUNDS TOOLHOST WORKSPACE TOOL ARGUMENTS_JSON -- SERVER_COMMAND...

SERVER_COMMAND is a stdio MCP server with the tool TOOL. WORKSPACE holds a
`.toolhost/config.toml` naming it as `up` (required, its tools allowed), so that
`toolhost --workspace WORKSPACE serve` offers it as `mcp__up__TOOL`. Both are started once and
kept running; each round measures `tools/list` and a call of TOOL with ARGUMENTS_JSON, one
request at a time, on the direct server and then through the gateway, so that both see the
same moments of the machine. Prints one JSON object with the medians (and p99) of each,
the ratios gateway / direct, and the gateway's own CPU per call (utime + stime from /proc).
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from mcp_client import Server


def timed(server: Server, method: str, params: dict) -> float:
    request_id = server.next_id
    server.next_id += 1
    started = time.perf_counter()
    server.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    reply = server.response()
    elapsed = time.perf_counter() - started
    if "error" in reply or reply.get("result", {}).get("isError"):
        raise SystemExit(f"{method} failed: {reply}")
    return elapsed


def summary(samples: list[float]) -> dict:
    samples = sorted(samples)
    return {
        "p50_us": round(statistics.median(samples) * 1e6),
        "p99_us": round(samples[int(len(samples) * 0.99)] * 1e6),
    }


def main() -> None:
    rounds = int(sys.argv[1])
    toolhost, workspace, tool = sys.argv[2:5]
    arguments = json.loads(sys.argv[5])
    command = sys.argv[sys.argv.index("--") + 1 :]

    direct = Server(command)
    direct.initialize()
    gateway = Server([toolhost, "--workspace", workspace, "serve"])
    gateway.initialize()
    pairs = [
        ("direct", direct, tool),
        ("gateway", gateway, f"mcp__up__{tool}"),
    ]
    calls: dict[str, list[float]] = {"direct": [], "gateway": []}
    lists: dict[str, list[float]] = {"direct": [], "gateway": []}
    for _ in range(100):  # warm-up
        for name, server, called in pairs:
            timed(server, "tools/call", {"name": called, "arguments": arguments})
            timed(server, "tools/list", {})
    gateway_cpu = gateway.cpu_seconds()
    for _ in range(rounds):
        for name, server, called in pairs:
            calls[name].append(
                timed(server, "tools/call", {"name": called, "arguments": arguments})
            )
    gateway_cpu = gateway.cpu_seconds() - gateway_cpu
    for _ in range(rounds // 4):
        for name, server, _tool in pairs:
            lists[name].append(timed(server, "tools/list", {}))
    direct.close()
    gateway.close()

    result = {
        "tool": tool,
        "call": {name: summary(samples) for name, samples in calls.items()},
        "tools_list": {name: summary(samples) for name, samples in lists.items()},
    }
    for kind in ("call", "tools_list"):
        result[kind]["ratio_p50"] = round(
            result[kind]["gateway"]["p50_us"] / result[kind]["direct"]["p50_us"], 3
        )
    result["gateway_cpu_us_per_call"] = round(gateway_cpu / rounds * 1e6, 1)
    print(json.dumps(result))


if __name__ == "__main__":
    main()

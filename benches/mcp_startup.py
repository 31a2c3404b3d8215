"""Cold starts of several MCP servers over stdio, alternating round by round.

Usage: mcp_startup.py ROUNDS NAME COMMAND [NAME COMMAND]...   (each COMMAND one shell-quoted word)

Each round starts every server once, in turn, so that whatever else the machine does at that
moment weighs on all of them alike (a server measured in a block of its own, as
mcp_client.py's start-up figure is, can land on a busier or quieter minute than its peer).
For each start it takes two times from the spawn: to the `initialize` response, and to the
`tools/list` response the client sends right after `notifications/initialized`, as MCP
clients do — a server that puts work off until it is listed still pays for it there.
Prints one JSON object per server: the medians and the best of each, in milliseconds.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from mcp_client import Server
from process_time import alternate, named_commands


def start(command: list[str]) -> tuple[float, float]:
    started = time.perf_counter()
    server = Server(command)
    server.initialize()
    initialized = time.perf_counter() - started
    server.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}})
    reply = server.response()
    listed = time.perf_counter() - started
    server.close()
    if "error" in reply or not reply["result"]["tools"]:
        raise SystemExit(f"tools/list failed: {reply}")
    return initialized, listed


def main() -> None:
    rounds = int(sys.argv[1])
    servers = named_commands(sys.argv[2:], __doc__)
    times = alternate(rounds, servers, start)
    for name, _ in servers:
        initialized = [first for first, _ in times[name]]
        listed = [second for _, second in times[name]]
        print(
            json.dumps(
                {
                    "server": name,
                    "rounds": rounds,
                    "initialized_ms": round(statistics.median(initialized) * 1000, 2),
                    "initialized_best_ms": round(min(initialized) * 1000, 2),
                    "tools_listed_ms": round(statistics.median(listed) * 1000, 2),
                    "tools_listed_best_ms": round(min(listed) * 1000, 2),
                }
            )
        )


if __name__ == "__main__":
    main()

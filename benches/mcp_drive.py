"""Sends N small `Read` calls (8 in flight) to the MCP server started by COMMAND over stdio.

Usage: mcp_drive.py N [TOOL ARGUMENTS_JSON] -- COMMAND...

TOOL and ARGUMENTS_JSON default to `Read` of `small.txt`.

No timing: it exists to run the server under a profiler (see mcp_callgrind.sh), where the
instruction count of N calls minus that of none is the server's work for N calls.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

IN_FLIGHT = 8


def main() -> None:
    total = int(sys.argv[1])
    separator = sys.argv.index("--")
    command = sys.argv[separator + 1 :]
    tool, arguments = "Read", {"path": "small.txt"}
    if separator == 4:
        tool, arguments = sys.argv[2], json.loads(sys.argv[3])
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    buffer = b""

    def send(message: dict) -> None:
        server.stdin.write(json.dumps(message).encode() + b"\n")

    def response() -> dict:
        nonlocal buffer
        while True:
            while b"\n" not in buffer:
                chunk = os.read(server.stdout.fileno(), 1 << 20)
                if not chunk:
                    raise SystemExit("the server closed stdout")
                buffer += chunk
            line, buffer = buffer.split(b"\n", 1)
            message = json.loads(line)
            if "id" in message:
                return message

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "drive", "version": "1"}}})
    response()
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    call = {"name": tool, "arguments": arguments}
    sent = received = 0
    while received < total:
        while sent < total and sent - received < IN_FLIGHT:
            sent += 1
            send({"jsonrpc": "2.0", "id": sent, "method": "tools/call", "params": call})
        reply = response()
        received += 1
        if reply.get("error") or reply["result"].get("isError"):
            raise SystemExit(f"the {tool} call failed: {reply}")
    server.stdin.close()
    server.wait()


if __name__ == "__main__":
    main()

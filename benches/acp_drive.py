"""What the ACP face costs: `toolhost acp`'s `initialize` against `toolhost serve`'s start-up, and
the ACP face's time per agent turn against `toolhost run`'s, against an instant mock model.

Usage: acp_drive.py TOOLHOST ROUNDS TURNS WORKSPACE MOCK_N_URL MOCK_0_URL

MOCK_N_URL is a mock model (../shared/agent-peers/mock_llm.py) answering TURNS Bash calls
(`cat f.txt`) before its final answer, MOCK_0_URL one answering at once. Every measurement is a
fresh process, alternating round by round so that background load hits all alike:

- serve start: spawn -> the MCP `initialize` response of `toolhost serve`;
- acp initialize: spawn -> the ACP `initialize` response of `toolhost acp`;
- run per turn: (wall time of `toolhost run` with TURNS calls - with none) / TURNS;
- acp per turn: the same for one `session/prompt` of a fresh session of `toolhost acp`
  (`session/prompt` sent -> its response), every update read as it comes.

Both keep their session in the store (under a temporary HOME), as a user's do: what differs per
turn is the face alone.

Prints one JSON object of medians, in milliseconds.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

from mcp_client import Server


def environment(url: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.update({"OPENAI_BASE_URL": url, "OPENAI_API_KEY": "sk-bench"})
    return env


class Acp(Server):
    """`toolhost acp` over stdio (the MCP client's framing: one JSON object a line)."""

    def __init__(self, command: list[str], url: str) -> None:
        self.process = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0,
            env=environment(url),
        )
        self.reader = self.process.stdout
        self.buffer = b""
        self.next_id = 1

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            message = self.receive()
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise SystemExit(f"{method} failed: {message['error']}")
                return message["result"]


def serve_start(binary: str, workspace: str) -> float:
    started = time.perf_counter()
    server = Server([binary, "--workspace", workspace, "serve"])
    server.initialize()
    elapsed = time.perf_counter() - started
    server.close()
    return elapsed


def acp_initialize(binary: str, workspace: str, url: str) -> float:
    started = time.perf_counter()
    acp = Acp([binary, "--workspace", workspace, "acp"], url)
    acp.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    elapsed = time.perf_counter() - started
    acp.close()
    return elapsed


def acp_prompt(binary: str, workspace: str, url: str) -> float:
    acp = Acp([binary, "--workspace", workspace, "--mode", "bypassPermissions", "acp"], url)
    acp.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    session = acp.request("session/new", {"cwd": workspace, "mcpServers": []})["sessionId"]
    started = time.perf_counter()
    result = acp.request("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": "go"}]})
    elapsed = time.perf_counter() - started
    acp.close()
    if result["stopReason"] != "end_turn":
        raise SystemExit(f"the prompt ended with {result}")
    return elapsed


def run(binary: str, workspace: str, url: str) -> float:
    command = [binary, "--workspace", workspace, "--mode", "bypassPermissions", "run", "go"]
    started = time.perf_counter()
    done = subprocess.run(command, env=environment(url), capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0 or b"DONE" not in done.stdout:
        raise SystemExit(f"toolhost run failed: {done.stdout!r} {done.stderr!r}")
    return elapsed


def main() -> None:
    binary, rounds, turns, workspace, many, none = sys.argv[1:7]
    rounds, turns = int(rounds), int(turns)
    measures = {
        "serve_start": lambda: serve_start(binary, workspace),
        "acp_initialize": lambda: acp_initialize(binary, workspace, many),
        "run_n": lambda: run(binary, workspace, many),
        "run_0": lambda: run(binary, workspace, none),
        "acp_n": lambda: acp_prompt(binary, workspace, many),
        "acp_0": lambda: acp_prompt(binary, workspace, none),
    }
    for measure in measures.values():
        measure()
    times: dict[str, list[float]] = {name: [] for name in measures}
    for _ in range(rounds):
        for name, measure in measures.items():
            times[name].append(measure())
    median = {name: statistics.median(values) * 1000 for name, values in times.items()}
    run_turn = (median["run_n"] - median["run_0"]) / turns
    acp_turn = (median["acp_n"] - median["acp_0"]) / turns
    print(
        json.dumps(
            {
                "rounds": rounds,
                "turns": turns,
                "serve_start_ms": round(median["serve_start"], 2),
                "acp_initialize_ms": round(median["acp_initialize"], 2),
                "initialize_ratio": round(median["acp_initialize"] / median["serve_start"], 3),
                "run_per_turn_ms": round(run_turn, 3),
                "acp_per_turn_ms": round(acp_turn, 3),
                "acp_turn_overhead_ms": round(acp_turn - run_turn, 3),
            }
        )
    )


if __name__ == "__main__":
    main()

"""Whole-process run times of several commands, alternating round by round.

Usage: process_time.py ROUNDS NAME COMMAND [NAME COMMAND]...   (each COMMAND one shell-quoted word)

Each round runs every command once, in turn, from spawn to exit, output discarded; a command
that fails stops the measurement. Prints one JSON object per command: the median and the best,
in milliseconds.
"""

from __future__ import annotations

import json
import shlex
import statistics
import subprocess
import sys
import time


def run(command: list[str]) -> float:
    started = time.perf_counter()
    completed = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(f"{shlex.join(command)} failed: {completed.stderr.decode(errors='replace')}")
    return elapsed


def main() -> None:
    if len(sys.argv) < 4 or len(sys.argv) % 2:
        raise SystemExit(__doc__)
    rounds = int(sys.argv[1])
    commands = [(name, shlex.split(command)) for name, command in zip(sys.argv[2::2], sys.argv[3::2])]
    for _, command in commands:  # once each first: the page cache holds every binary
        run(command)
    times: dict[str, list[float]] = {name: [] for name, _ in commands}
    for _ in range(rounds):
        for name, command in commands:
            times[name].append(run(command))
    for name, _ in commands:
        print(
            json.dumps(
                {
                    "command": name,
                    "rounds": rounds,
                    "median_ms": round(statistics.median(times[name]) * 1000, 2),
                    "best_ms": round(min(times[name]) * 1000, 2),
                }
            )
        )


if __name__ == "__main__":
    main()

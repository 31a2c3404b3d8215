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
from typing import Callable, TypeVar

T = TypeVar("T")


def named_commands(arguments: list[str], usage: str) -> list[tuple[str, list[str]]]:
    """`NAME COMMAND` pairs, each COMMAND one shell-quoted word, split."""
    if not arguments or len(arguments) % 2:
        raise SystemExit(usage)
    return [(name, shlex.split(command)) for name, command in zip(arguments[0::2], arguments[1::2])]


def alternate(rounds: int, commands: list[tuple[str, list[str]]], measure: Callable[[list[str]], T]) -> dict[str, list[T]]:
    """Measures every command once in each round, in turn, after one unmeasured run of each
    (so that the page cache holds every binary)."""
    for _, command in commands:
        measure(command)
    results: dict[str, list[T]] = {name: [] for name, _ in commands}
    for _ in range(rounds):
        for name, command in commands:
            results[name].append(measure(command))
    return results


def run(command: list[str]) -> float:
    started = time.perf_counter()
    completed = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(f"{shlex.join(command)} failed: {completed.stderr.decode(errors='replace')}")
    return elapsed


def main() -> None:
    rounds = int(sys.argv[1])
    commands = named_commands(sys.argv[2:], __doc__)
    times = alternate(rounds, commands, run)
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

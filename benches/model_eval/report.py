#!/usr/bin/env python3
"""The evaluation's tables, from its rows: per task, per agent, and the failure modes.

`python3 report.py RESULTS_DIR` prints the table of a run again from its results.jsonl.
"""

import collections
import json
import sys
from pathlib import Path


def cell(row):
    if row is None:
        return "—"
    return "pass" if row["passed"] else f"**{row['mode']}**"


def render(meta, rows):
    agents = list(dict.fromkeys(r["agent"] for r in rows))
    by = {(r["task"], r["agent"]): r for r in rows}
    tasks = list(dict.fromkeys(r["task"] for r in rows))
    lines = [f"# Model evaluation: template {meta.get('template')}, model {meta.get('model')}",
             "",
             f"endpoint {meta.get('endpoint')} ({meta.get('api')}), temperature {meta.get('temperature')}, "
             f"at most {meta.get('max_requests')} requests of {meta.get('max_tokens')} output tokens and "
             f"{meta.get('timeout')} s per run; tools: toolhost {meta.get('toolhost_tools')}, pi {meta.get('pi_tools')}; "
             f"{', '.join(f'{a}: {v}' for a, v in (meta.get('versions') or {}).items())}; started {meta.get('started')} UTC",
             "",
             "| task | " + " | ".join(agents) + " | " + " | ".join(f"{a} requests / tools" for a in agents) + " |",
             "|---|" + "---|" * (2 * len(agents))]
    for task in tasks:
        cells = [cell(by.get((task, a))) for a in agents]
        extra = []
        for a in agents:
            r = by.get((task, a))
            extra.append("—" if r is None else f"{r['requests']} / {','.join(r['tools']) or '-'}"[:70])
        lines.append(f"| {task} | " + " | ".join(cells) + " | " + " | ".join(extra) + " |")
    lines += ["", "| agent | passed | runs | requests | prompt tokens | output tokens | model s | wall s | tool calls |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for a in agents:
        mine = [r for r in rows if r["agent"] == a]
        lines.append(f"| {a} | {sum(r['passed'] for r in mine)} | {len(mine)} | {sum(r['requests'] for r in mine)} | "
                     f"{sum(r['prompt_tokens'] for r in mine)} | {sum(r['output_tokens'] for r in mine)} | "
                     f"{sum(r['model_seconds'] for r in mine):.0f} | {sum(r['seconds'] for r in mine):.0f} | "
                     f"{sum(len(r['tools']) for r in mine)} |")
    modes = collections.Counter((r["agent"], r["mode"]) for r in rows if not r["passed"])
    if modes:
        lines += ["", "Failure modes: " + "; ".join(
            f"{a}: " + ", ".join(f"{m} {n}" for (aa, m), n in sorted(modes.items()) if aa == a)
            for a in agents if any(aa == a for aa, _ in modes))]
    misses = [r for r in rows if not r["passed"]]
    if misses:
        lines += ["", "| miss | agent | mode | detail |", "|---|---|---|---|"]
        for r in misses:
            detail = (r["detail"] or "").replace("|", "\\|").replace("\n", " ")[:220]
            lines.append(f"| {r['task']} | {r['agent']} | {r['mode']} | {detail} |")
    return "\n".join(lines) + "\n"


def main():
    out = Path(sys.argv[1])
    meta = json.loads((out / "meta.json").read_text())
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    # A task run twice (a re-run appended to the file) counts with its last run.
    last = {(r["task"], r["agent"]): r for r in rows}
    print(render(meta, list(last.values())))


if __name__ == "__main__":
    main()

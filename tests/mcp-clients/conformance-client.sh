#!/usr/bin/env bash
# The client command the official conformance suite's client scenarios run, with toolhost as
# the MCP client: `conformance-client.sh TOOLHOST_BINARY SERVER_URL` (the suite appends the
# URL of the server it started), the scenario's name in $MCP_CONFORMANCE_SCENARIO and, for
# scenarios that hand the client credentials (a pre-registered client), a JSON object in
# $MCP_CONFORMANCE_CONTEXT.
#
# It does what a user of the real binary does: a configuration naming the server (and, as
# the configuration's OAuth settings, the client the context names, the suite's client-id
# metadata document, which toolhost uses only where the authorization server supports them,
# and `grant = "client_credentials"` for the scenarios of a machine client),
# `toolhost mcp login` for the auth scenarios with $BROWSER set to a script that follows the
# authorization URL (the authorization server redirects it to toolhost's callback on
# 127.0.0.1), then `toolhost mcp test` and a call of the scenario's tool. The same $BROWSER
# serves the scope step-up a 403 starts during the call.
set -euo pipefail
binary="$1"
url="$2"
scenario="${MCP_CONFORMANCE_SCENARIO:-}"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch/home"
workspace="$scratch/workspace"
mkdir -p "$HOME" "$workspace/.toolhost"

cat > "$scratch/browser" <<'BROWSER'
#!/bin/sh
exec curl -sSL --max-time 20 -o /dev/null "$1"
BROWSER
chmod +x "$scratch/browser"
export BROWSER="$scratch/browser"

context="${MCP_CONFORMANCE_CONTEXT:-}"
field() {
    [ -n "$context" ] || return 0
    printf '%s' "$context" | python3 -c "import json, sys; print(json.load(sys.stdin).get('$1') or '')"
}
client_id="$(field client_id)"
client_secret="$(field client_secret)"

{
    printf '[mcp_servers.conformance]\nurl = "%s"\n\n[mcp_servers.conformance.oauth]\n' "$url"
    printf 'client_metadata_url = "https://conformance-test.local/client-metadata.json"\n'
    # The client-credentials scenarios are a machine client, which a user configures as such.
    case "$scenario" in
    auth/client-credentials-*) printf 'grant = "client_credentials"\n' ;;
    esac
    if [ -n "$client_id" ]; then
        printf 'client_id = "%s"\n' "$client_id"
    fi
    if [ -n "$client_secret" ]; then
        printf 'client_secret_env = "CONFORMANCE_CLIENT_SECRET"\n'
    fi
} > "$workspace/.toolhost/config.toml"
export CONFORMANCE_CLIENT_SECRET="$client_secret"

toolhost() { "$binary" --workspace "$workspace" "$@"; }

# The tool each scenario's server offers.
case "$scenario" in
tools_call) tool=add_numbers arguments='{"a": 5, "b": 3}' ;;
sse-retry) tool=test_reconnection arguments='{}' ;;
elicitation-sep1034-client-defaults) tool=test_client_elicitation_defaults arguments='{}' ;;
auth/*) tool=test-tool arguments='{}' ;;
*) tool='' arguments='' ;;
esac

case "$scenario" in
auth/*) toolhost mcp login conformance ;;
esac
toolhost mcp test conformance
if [ -n "$tool" ]; then
    toolhost call --yes "mcp__conformance__$tool" "$arguments"
fi

#!/usr/bin/env bash
# Installs, idempotently, what the MCP tests need from the registries: a Python venv under
# $TOOLHOST_CACHE (default ~/.cache/toolhost) with the official Python SDK `mcp`, the
# reference server `mcp-server-git` and the model providers' official Python SDKs `openai`
# and `anthropic` (whose types tests/provider-sdks/check_wire.py checks the wire against), and `npm ci` here (the TypeScript SDK, the conformance
# suite, Node 22, the reference servers `server-everything` and `server-filesystem`, and the
# official ACP TypeScript SDK `@agentclientprotocol/sdk`, which node/acp_client.mjs drives
# `toolhost acp` with).
# Prints the variables the Rust tests read; use it as `eval "$(tests/mcp-clients/setup.sh)"`.
# Nothing is skipped: when an install fails, this script fails.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${TOOLHOST_CACHE:-$HOME/.cache/toolhost}"

# The HTTPS tests make their certificates with the openssl command (Debian's package).
if ! command -v openssl >/dev/null; then
    echo "-- installing openssl from Debian's packages" >&2
    apt-get update -qq >&2 && apt-get install -y -qq openssl >&2
fi

# The OAuth tests' stand-in browser ($BROWSER) follows redirects with curl (Debian's package).
if ! command -v curl >/dev/null; then
    echo "-- installing curl from Debian's packages" >&2
    apt-get update -qq >&2 && apt-get install -y -qq curl >&2
fi

# The Notify test runs a private session bus with Debian's dbus-daemon.
if ! command -v dbus-daemon >/dev/null; then
    echo "-- installing dbus-daemon from Debian's packages" >&2
    apt-get update -qq >&2 && apt-get install -y -qq dbus-daemon >&2
fi

# The OAuth keyring tests run a real Secret Service (GNOME Keyring's daemon) on a private bus
# and read it with libsecret's secret-tool.
if ! command -v gnome-keyring-daemon >/dev/null || ! command -v secret-tool >/dev/null; then
    echo "-- installing gnome-keyring and libsecret-tools from Debian's packages" >&2
    apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends gnome-keyring libsecret-tools >&2
fi

# Pinned; reinstalled only when the pins change.
python_packages="mcp==2.3.0 mcp-server-git==2026.10.19 openai==3.57.0 anthropic==2.16.0"
venv="$cache/venv"
if [ "$(cat "$venv/.toolhost-pin" 2>/dev/null)" != "$python_packages" ]; then
    echo "-- installing $python_packages into $venv" >&2
    python3 -m venv "$venv"
    # shellcheck disable=SC2086
    "$venv/bin/pip" install --quiet --disable-pip-version-check $python_packages >&2
    echo "$python_packages" > "$venv/.toolhost-pin"
fi

# Exactly as locked; reinstalled only when the lock file changes.
lock_hash="$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)"
if [ "$(cat "$here/node_modules/.toolhost-lock" 2>/dev/null)" != "$lock_hash" ]; then
    echo "-- npm ci in $here" >&2
    (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >&2)
    echo "$lock_hash" > "$here/node_modules/.toolhost-lock"
fi

echo "export TOOLHOST_TEST_VENV='$venv'"
echo "export TOOLHOST_TEST_NODE_MODULES='$here/node_modules'"

#!/usr/bin/env bash
# Regenerates the book's generated pages from the code: the tool reference
# (docs/src/tools-reference.md) from the registry's own specs, written by
# `toolhost tools --format markdown` in an empty workspace with an empty home, so that nothing
# configured on this machine (custom tools, MCP servers, agents) gets into it.
# crates/cli/tests/book.rs fails when the committed page differs from this output.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/toolhost/target}"
cargo build --quiet -p toolhost
empty="$(mktemp -d)"
trap 'rm -rf "$empty"' EXIT
mkdir -p "$empty/home" "$empty/workspace"
env -i PATH="$PATH" HOME="$empty/home" "$CARGO_TARGET_DIR/debug/toolhost" \
    --workspace "$empty/workspace" tools --format markdown > docs/src/tools-reference.md
echo "wrote docs/src/tools-reference.md"

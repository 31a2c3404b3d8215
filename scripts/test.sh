#!/usr/bin/env bash
# Runs every test of toolhost on a fresh machine: installs what the tests need from the
# package registries, then runs the whole suite. `.ci/run` calls exactly this script.
set -euo pipefail
cd "$(dirname "$0")/.."

# Reuse a build folder outside the clone when there is one: cold builds are the slow part.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/toolhost/target}"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

# Cargo does not rebuild a workspace crate when the clone moves, but tests keep the path they
# were built at (`env!("CARGO_MANIFEST_DIR")`: insta's snapshot folder, fixtures). A build
# folder shared by clones at different paths gets this workspace's crates rebuilt (the
# dependencies, the slow part, stay).
mkdir -p "$CARGO_TARGET_DIR"
if [ "$(cat "$CARGO_TARGET_DIR/.toolhost-clone" 2>/dev/null)" != "$PWD" ]; then
    for crate in crates/*/Cargo.toml; do
        cargo clean --quiet -p "$(sed -n 's/^name = "\(.*\)"/\1/p' "$crate" | head -n 1)"
    done
    echo "$PWD" > "$CARGO_TARGET_DIR/.toolhost-clone"
fi

echo "== installing the MCP SDKs and reference servers the tests use (idempotent)"
eval "$(tests/mcp-clients/setup.sh)"

echo "== installing mdBook for the book's tests (idempotent)"
eval "$(scripts/setup-docs.sh)"

echo "== unit, integration, property and doc tests (the book and its examples included)"
cargo test --workspace --locked

echo "== toolhost serve against the official MCP SDK clients and the conformance suite"
cargo build -p toolhost --locked
tests/mcp-clients/run.sh "$CARGO_TARGET_DIR/debug/toolhost"

echo "== the fuzz target builds (run it by hand: see README)"
# Not --locked: the fuzz crate has its own lock file, which follows toolhost-core's dependencies.
cargo build --manifest-path fuzz/Cargo.toml --target-dir "$CARGO_TARGET_DIR/fuzz"

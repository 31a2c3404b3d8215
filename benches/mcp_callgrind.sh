#!/usr/bin/env bash
# Instructions per small Read in `toolhost serve`, counted by callgrind (repeatable whatever
# the machine's load, unlike wall-clock or CPU time): the count for N calls minus the count
# for none, divided by N. Leaves the two profiles in $OUT (default a temp folder) for
# `callgrind_annotate --inclusive=yes $OUT/callgrind.N`.
#
# Usage: benches/mcp_callgrind.sh [N] (default 2000), with a build of $PROFILE (default release,
# or `profiling`: release without LTO, quick to rebuild) in $CARGO_TARGET_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/toolhost/target}"
calls="${1:-2000}"
toolhost="$CARGO_TARGET_DIR/${PROFILE:-release}/toolhost"
out="${OUT:-$(mktemp -d)}"
mkdir -p "$out"
workspace="$(mktemp -d)"
trap 'rm -rf "$workspace"' EXIT
seq 1 40 | sed 's/^/line /' > "$workspace/small.txt"   # the same file as mcp_bench.sh

instructions() {
    python3 benches/mcp_drive.py "$1" -- valgrind --tool=callgrind \
        --callgrind-out-file="$out/callgrind.$1" "$toolhost" --workspace "$workspace" serve 2>&1 \
        | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
base="$(instructions 0)"
loaded="$(instructions "$calls")"
echo "instructions: start-up $base, per Read $(((loaded - base) / calls)) (profiles in $out)"

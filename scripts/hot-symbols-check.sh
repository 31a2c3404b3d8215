#!/usr/bin/env bash
# Fails when crates/cli/hot-symbols.txt has gone stale for a release build of toolhost: when
# under 95 % of the names it lists are functions of BINARY. The file orders the functions
# `toolhost serve` runs together at the start of .text (see scripts/hot-symbols.sh); names the
# build no longer has are ignored by the linker, silently, and the server's peak RSS creeps
# back over 10 MiB (93 % matching gave 10.5 MiB). Every script that makes a release build runs
# this right after it, so a stale file stops the measurement instead of skewing it.
#
# Usage: scripts/hot-symbols-check.sh BINARY
set -euo pipefail
cd "$(dirname "$0")/.."
binary="${1:?usage: scripts/hot-symbols-check.sh path/to/release/toolhost}"
listed="$(wc -l < crates/cli/hot-symbols.txt)"
found="$(nm --defined-only "$binary" | awk '{print $3}' | sort -u \
    | comm -12 - <(sort -u crates/cli/hot-symbols.txt) | wc -l)"
echo "crates/cli/hot-symbols.txt: $found of $listed functions found in $binary" >&2
if [ $((found * 100)) -lt $((listed * 95)) ]; then
    echo "error: the hot-function order is stale (under 95 % of its names are in this build)." >&2
    echo "Refresh it with scripts/hot-symbols.sh (a release build, a callgrind run of serve," >&2
    echo "and the relink), then commit crates/cli/hot-symbols.txt." >&2
    exit 1
fi

# The names alone do not say the linker used the file (a build script that did not find it
# passes no ordering, and the names are all there): the listed functions must come first in
# .text. Of the binary's first 200 functions by address, most must be listed ones.
first="$(nm -n --defined-only "$binary" \
    | awk '($2 == "t" || $2 == "T") && ++seen <= 200 {print $3}' \
    | sort -u | comm -12 - <(sort -u crates/cli/hot-symbols.txt) | wc -l)"
echo "of the first 200 functions of .text, $first are listed ones" >&2
if [ "$first" -lt 150 ]; then
    echo "error: the hot-function order was not applied to $binary (the build script passes" >&2
    echo "--symbol-ordering-file only to optimised Linux x86-64 builds with the default linker)." >&2
    exit 1
fi

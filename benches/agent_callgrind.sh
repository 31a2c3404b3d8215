#!/usr/bin/env bash
# Instructions the agent loop itself costs, counted by callgrind (repeatable whatever the
# machine's load, unlike agent_bench.sh's wall-clock figures): `toolhost run` against the
# instant mock model of ../shared/agent-peers, once answering at once (start-up and one
# request) and once after N Bash calls (`cat f.txt`); the difference divided by N is the cost
# of one turn in toolhost's own process (the Bash children are not traced).
#
# Usage: benches/agent_callgrind.sh [N] (default 20), with a build of $PROFILE (default
# release, or `profiling`) in $CARGO_TARGET_DIR, or TOOLHOST_BIN=path to compare two builds.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/toolhost/target}"
turns="${1:-20}"
toolhost="${TOOLHOST_BIN:-$CARGO_TARGET_DIR/${PROFILE:-release}/toolhost}"
mock="${PEERS_SRC:-$PWD/../shared/agent-peers}/mock_llm.py"
[ -f "$mock" ] || { echo "no mock model at $mock: set PEERS_SRC" >&2; exit 2; }
scratch="$(mktemp -d)"
trap 'kill $(cat "$scratch"/pid.* 2>/dev/null) 2>/dev/null || true; rm -rf "$scratch"' EXIT

# One run of N turns: the instructions toolhost's own process executed.
instructions() {
    local n="$1" ws="$scratch/ws.$1" home="$scratch/home.$1"
    mkdir -p "$ws" "$home"
    echo "hello from f.txt" > "$ws/f.txt"
    python3 "$mock" --turns "$n" --log "$scratch/log.$n" --port-file "$scratch/port.$n" &
    echo $! > "$scratch/pid.$n"
    for _ in $(seq 100); do [ -s "$scratch/port.$n" ] && break; sleep 0.05; done
    HOME="$home" OPENAI_BASE_URL="http://127.0.0.1:$(cat "$scratch/port.$n")/v1" \
        valgrind --tool=callgrind --trace-children=no --callgrind-out-file="$scratch/cg.$n" \
        "$toolhost" --workspace "$ws" --mode bypassPermissions run --model mock-model \
        "run cat f.txt" 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
    kill "$(cat "$scratch/pid.$n")" 2>/dev/null || true
    # A run that stopped early would look cheap: it must have made every request.
    if [ "$(wc -l < "$scratch/log.$n")" -le "$n" ]; then
        echo "the run of $n turns made only $(wc -l < "$scratch/log.$n") requests" >&2
        exit 1
    fi
}
base="$(instructions 0)"
loaded="$(instructions "$turns")"
echo "instructions: run answering at once $base, per turn $(((loaded - base) / turns)) ($toolhost)"

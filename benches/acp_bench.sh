#!/usr/bin/env bash
# What the ACP face costs (issue 33's targets): `toolhost acp`'s `initialize` within 1.2x of
# `toolhost serve`'s start-up, and a turn of `session/prompt` within 1 ms of a turn of
# `toolhost run`, both against the instant mock model of ../shared/agent-peers (mock_llm.py,
# on 127.0.0.1), whose Bash calls run `cat f.txt`. See benches/acp_drive.py for what is timed.
#
#   benches/acp_bench.sh                    (from anywhere)
#
# Env: ROUNDS (15), TURNS (20), TOOLHOST_BIN (skip the build; default: a `profiling` build,
#      release code generation without fat LTO), CARGO_TARGET_DIR, MOCK_LLM (the mock's path).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=${ROUNDS:-15}
TURNS=${TURNS:-20}
MOCK_LLM=${MOCK_LLM:-$REPO/../shared/agent-peers/mock_llm.py}
[ -f "$MOCK_LLM" ] || { echo "no mock model at $MOCK_LLM: set MOCK_LLM" >&2; exit 2; }

if [ -z "${TOOLHOST_BIN:-}" ]; then
    (cd "$REPO" && cargo build --profile profiling -p toolhost >&2)
    TOOLHOST_BIN="${CARGO_TARGET_DIR:-$REPO/target}/profiling/toolhost"
fi

work=$(mktemp -d)
mocks=()
cleanup() {
    for pid in "${mocks[@]}"; do kill "$pid" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/workspace" "$work/home"
echo "hello from f.txt" > "$work/workspace/f.txt"
export HOME="$work/home"

# One mock answering TURNS calls before its final text, one answering at once.
for mock in "many $TURNS" "none 0"; do
    set -- $mock
    python3 "$MOCK_LLM" --turns "$2" --log "$work/$1.jsonl" --port-file "$work/$1.port" \
        >"$work/$1.out" 2>&1 &
    mocks+=("$!")
done
for name in many none; do
    for _ in $(seq 100); do [ -s "$work/$name.port" ] && break; sleep 0.05; done
done
many="http://127.0.0.1:$(cat "$work/many.port")/v1"
none="http://127.0.0.1:$(cat "$work/none.port")/v1"

python3 "$REPO/benches/acp_drive.py" "$TOOLHOST_BIN" "$ROUNDS" "$TURNS" "$work/workspace" "$many" "$none"

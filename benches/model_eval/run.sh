#!/usr/bin/env bash
# The model evaluation in one command: toolhost run and pi, task by task, on one model through
# one logging proxy (docs/src/model-eval.md).
#   benches/model_eval/run.sh [--agents toolhost,pi] [--template default|neutral|both|none] [--tasks a,b]
#                             [--endpoint URL --api openai-chat|anthropic --model NAME --api-key-env VAR]
# With the local model (the default endpoint), ../shared/llm serves it: setup.sh is run, the server is
# (re)started with each chat template and stopped at the end. Any other endpoint: --template none.
# TOOLHOST_BIN picks the binary; else this builds and uses the debug binary (BUILD_PROFILE=release
# for the release one). pi comes from ../shared/agent-peers, copied to PEERS_DIR (/var/tmp/agent-peers).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
LLM_DIR=${LLM_DIR:-$REPO/../shared/llm}
PEERS_SRC=${PEERS_SRC:-$REPO/../shared/agent-peers}
export PEERS_DIR=${PEERS_DIR:-/var/tmp/agent-peers}
export LLM_DIR

template=default agents=toolhost,pi
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
    case "${args[$i]}" in
        --template) template=${args[$((i + 1))]:-} ;;
        --template=*) template=${args[$i]#--template=} ;;
        --agents) agents=${args[$((i + 1))]:-} ;;
        --agents=*) agents=${args[$i]#--agents=} ;;
    esac
done

if [ "$template" != none ]; then
    bash "$LLM_DIR/setup.sh" >&2
    # The prebuilt llama-server needs AVX-512 (it dies with "Illegal instruction" without it);
    # scripts/e2e-local-model.sh builds one from source into ~/.cache/toolhost-llm-src.
    if [ -z "${LLM_HOME:-}" ] && ! grep -qw avx512f /proc/cpuinfo; then
        export LLM_HOME=$HOME/.cache/toolhost-llm-src
        [ -f "$LLM_HOME/server/.installed" ] || {
            echo "this processor has no AVX-512: build llama-server once with LLAMA_FROM_SOURCE=1 scripts/e2e-local-model.sh" >&2
            exit 2; }
    fi
fi

# One slot per agent (the server picks the slot whose cached prompt matches best), so switching
# agents between tasks does not make the server read each agent's system prompt again; the
# context is doubled so that each slot keeps 16k tokens.
export LLM_CTX=${LLM_CTX:-32768}
export LLM_EXTRA_ARGS="-np 2 ${LLM_EXTRA_ARGS:-}"

# pi's grep and find tools run ripgrep and fd; without them they fail ("not available and could
# not be downloaded", the machine is offline), which would count against pi, not its model.
if [[ ,$agents, == *,pi,* ]]; then
    for tool in rg fd:fdfind; do
        command -v "${tool%%:*}" >/dev/null || { [ "${tool#*:}" != "$tool" ] && command -v "${tool#*:}" >/dev/null; } || {
            echo "pi needs ${tool%%:*} on PATH: apt-get install ripgrep fd-find (or cargo install ripgrep fd-find)" >&2; exit 2; }
    done
fi

if [[ ,$agents, == *,pi,* ]] && [ ! -f "$PEERS_DIR/node_modules/@mariozechner/pi-coding-agent/dist/cli.js" ]; then
    mkdir -p "$PEERS_DIR"
    cp -r "$PEERS_SRC/." "$PEERS_DIR/" && chmod -R u+w "$PEERS_DIR"
    (cd "$PEERS_DIR" && ./setup.sh >&2)
fi

if [[ ,$agents, == *,toolhost,* ]] && [ -z "${TOOLHOST_BIN:-}" ]; then
    profile=${BUILD_PROFILE:-debug}
    flag=(); [ "$profile" = release ] && flag=(--release)
    (cd "$REPO" && cargo build "${flag[@]}" -p toolhost >&2)
    export TOOLHOST_BIN=${CARGO_TARGET_DIR:-$REPO/target}/$profile/toolhost
fi

exec python3 "$HERE/runner.py" --llm-dir "$LLM_DIR" --peers-dir "$PEERS_DIR" ${TOOLHOST_BIN:+--toolhost-bin "$TOOLHOST_BIN"} "$@"

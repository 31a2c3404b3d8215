#!/usr/bin/env bash
# Start-up with a Claude Code user's files (issue 29): 500 agent files and 300 slash commands,
# laid out as published collections install themselves (sub-folders per team, front matter
# and a body of a few kilobytes each), against the same workspace without them.
#
# Times, for both workspaces: `toolhost tools` and a `toolhost call` of Read as whole processes
# (hyperfine, HYPERFINE_RUNS, default 30, after 3 warm-ups) and `toolhost serve`'s cold start to `initialize` and to
# `tools/list` (benches/mcp_startup.py, the two alternating round by round, STARTUP_ROUNDS,
# default 30). Prints hyperfine's table and one JSON line per workspace.
#
# Builds toolhost in release unless TOOLHOST names a binary; HOME is an empty folder for every
# run, so the machine's own ~/.claude and ~/.toolhost change nothing. Installs hyperfine from
# Debian's packages when it is missing. AGENTS and COMMANDS change the counts.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ -z "${TOOLHOST:-}" ]; then
    export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/toolhost/target}"
    cargo build --release -p toolhost --locked
    TOOLHOST="$CARGO_TARGET_DIR/release/toolhost"
fi
if ! command -v hyperfine >/dev/null; then
    echo "installing hyperfine from Debian's packages" >&2
    apt-get update -qq >/dev/null && apt-get install -y -qq hyperfine >/dev/null
fi

agents="${AGENTS:-500}"
commands="${COMMANDS:-300}"
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
home="$root/home"
bare="$root/bare"
claude="$root/claude"
mkdir -p "$home" "$bare" "$claude"
echo "hello" > "$bare/notes.txt"
echo "hello" > "$claude/notes.txt"

# A body of about 3 KB: the length of a typical published agent's instructions.
body="$(for section in 1 2 3 4 5 6; do
    printf '## Part %s\n\n' "$section"
    for line in 1 2 3 4 5; do
        printf -- '- Check the code for issue %s.%s and report it with the file, the line and a fix; keep the report short.\n' "$section" "$line"
    done
    printf '\n'
done)"

teams=(engineering design data security operations quality product research marketing support)
for n in $(seq 1 "$agents"); do
    team="${teams[$((n % ${#teams[@]}))]}"
    folder="$claude/.claude/agents/$team/group-$((n % 7))"
    mkdir -p "$folder"
    cat > "$folder/agent-$n.md" <<EOF
---
name: agent-$n
description: Use this agent PROACTIVELY for $team work of kind $n, such as reviews, fixes and reports.
tools: Read, Grep, Glob, Bash, LS, MultiEdit, TodoWrite
model: inherit
color: blue
---
You are agent $n, a specialist in $team.

$body
EOF
done
for n in $(seq 1 "$commands"); do
    folder="$claude/.claude/commands/group-$((n % 12))"
    mkdir -p "$folder"
    cat > "$folder/command-$n.md" <<EOF
---
description: Runs task $n on the given files.
allowed-tools: Read, Grep, Bash(git status:*)
argument-hint: [files]
---
Do task $n on \$ARGUMENTS.

\`\`\`python
@dataclass
class Example$n:
    name: str
\`\`\`

$body
EOF
done
echo "generated $agents agent files and $commands commands in $claude" >&2

run() { printf 'env HOME=%q %q --workspace %q %s' "$home" "$TOOLHOST" "$1" "$2"; }

read_call="call Read '{\"path\":\"notes.txt\"}'"
hyperfine --warmup 3 --runs "${HYPERFINE_RUNS:-30}" --style basic \
    --command-name "tools, no Claude files" "$(run "$bare" tools) >/dev/null" \
    --command-name "tools, $agents agents + $commands commands" "$(run "$claude" tools) >/dev/null" \
    --command-name "call Read, no Claude files" "$(run "$bare" "$read_call") >/dev/null" \
    --command-name "call Read, $agents agents + $commands commands" "$(run "$claude" "$read_call") >/dev/null"

python3 benches/mcp_startup.py "${STARTUP_ROUNDS:-30}" \
    serve-bare "$(run "$bare" serve)" \
    serve-claude-files "$(run "$claude" serve)"

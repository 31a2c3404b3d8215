#!/usr/bin/env bash
# Regenerates crates/cli/hot-symbols.txt: the functions `toolhost serve` runs for a typical
# session (start-up, initialize, tools/list, calls of every filesystem tool and of Bash),
# hottest first. The release build hands the file to the linker (crates/cli/build.rs), which
# places those functions next to each other at the start of .text. The kernel maps code in
# 64 KiB blocks around each page fault, so code that is run scattered over the 16 MB .text
# makes most of the peak RSS of a small server; packed together it takes a few hundred KiB.
#
# The names are mangled with a hash of each crate's build metadata, so the file goes stale
# when dependency versions, features or the compiler change: names it lists that no longer
# exist are ignored (the link stays correct, only less packed). Rerun it after such changes.
#
# The scripts that make a release build check the file with scripts/hot-symbols-check.sh and
# fail under 95 % of its names matching; this script is the one-command refresh: it builds,
# profiles, writes the file, relinks with it and checks the result. Commit the file after.
#
# Usage: scripts/hot-symbols.sh   (builds the release profile in $CARGO_TARGET_DIR; needs valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/toolhost/target}"
command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind >/dev/null; }

cargo build --release -p toolhost >&2
toolhost="$CARGO_TARGET_DIR/release/toolhost"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/ws/src"
seq 1 40 | sed 's/^/line /' > "$work/ws/small.txt"
for i in $(seq 1 20); do seq 1 200 | sed "s/^/fn item_$i() { let value = \0; }/" > "$work/ws/src/m$i.rs"; done

python3 - "$work/ws" "$toolhost" "$work/callgrind.out" <<'PY'
import json, subprocess, sys
workspace, toolhost, out = sys.argv[1:4]
server = subprocess.Popen(
    ["valgrind", "--tool=callgrind", "--demangle=no", f"--callgrind-out-file={out}",
     toolhost, "--workspace", workspace, "serve", "--yes"],
    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
ids = iter(range(1, 1_000_000))

def request(method, params):
    message = {"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params}
    server.stdin.write(json.dumps(message).encode() + b"\n")
    server.stdin.flush()
    while True:
        reply = json.loads(server.stdout.readline())
        if reply.get("id") == message["id"]:
            if "error" in reply:
                raise SystemExit(f"{method} failed: {reply}")
            return reply["result"]

request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "hot-symbols", "version": "1"}})
server.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
request("tools/list", {})
calls = [
    ("Read", {"path": "small.txt"}),
    ("Read", {"path": "small.txt", "offset": 5, "limit": 10}),
    ("Read", {"path": "missing.txt"}),
    ("Read", {"pathh": "small.txt"}),
    ("ListDir", {"path": "."}),
    ("Glob", {"pattern": "**/*.rs"}),
    ("Grep", {"pattern": "item_1[0-9]", "output_mode": "content"}),
    ("Grep", {"pattern": "value", "output_mode": "count"}),
    ("Write", {"path": "new/notes.txt", "content": "one\ntwo\n"}),
    ("Edit", {"path": "new/notes.txt", "old_string": "two", "new_string": "three"}),
    ("Bash", {"command": "echo hello && ls"}),
]
for _ in range(20):
    for name, arguments in calls:
        request("tools/call", {"name": name, "arguments": arguments})
server.stdin.close()
server.wait()
PY

# Every function of the toolhost binary that ran, by the instructions it ran itself, hottest
# first (callgrind compresses names: `fn=(N) name` the first time, `fn=(N)` after).
python3 - "$work/callgrind.out" "$(realpath "$toolhost")" > crates/cli/hot-symbols.txt <<'PY'
import re, sys
profile, binary = sys.argv[1:3]
objects, names, cost = {}, {}, {}
current_object = current = None
in_call = False
for line in open(profile, encoding="utf-8", errors="replace"):
    match = re.match(r"(c?)(ob|fn)=\((\d+)\)(?: (.*))?", line)
    if match:
        is_call, kind, key, name = match.groups()
        table = objects if kind == "ob" else names
        if name:
            table[key] = name.strip()
        if not is_call:
            if kind == "ob":
                current_object = objects.get(key)
            else:
                current = (current_object, names.get(key))
        in_call = False
        continue
    if line.startswith("calls="):
        in_call = True  # the next cost line is the callee's inclusive cost, not ours
        continue
    if line[:1].isdigit() or line[:1] in "+-*":
        if in_call:
            in_call = False
            continue
        parts = line.split()
        if current and len(parts) > 1 and current[0] == binary:
            cost[current[1]] = cost.get(current[1], 0) + int(parts[1])
for name, _ in sorted(cost.items(), key=lambda item: -item[1]):
    print(name)
PY
echo "crates/cli/hot-symbols.txt: $(wc -l < crates/cli/hot-symbols.txt) functions" >&2
# The new order takes effect at the next link (build.rs reruns when the file changes).
cargo build --release -p toolhost >&2
scripts/hot-symbols-check.sh "$toolhost"

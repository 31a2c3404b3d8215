#!/usr/bin/env bash
# Benchmarks the filesystem tools through `toolhost call` against the usual command-line tools,
# in the same run, on the same data, and prints the ratios (toolhost time / reference time):
#
#   Grep  vs rg               on a generated source tree   (target: <= 1.25)
#   Glob  vs fdfind           on the same tree             (target: <= 1.25)
#   Read  of a 2000-line window in the middle of a 1 GB file
#         vs tail -n +K | head -n 2000                     (target: <= 0.70)
#   Edit  of one unique string in a 100 MB file vs sed -i  (target: <= 1.00; Edit also fsyncs)
#
# Usage: benches/fs_bench.sh            (from the repository root)
# Env:   BENCH_DIR (default /tmp/toolhost-bench), RUNS (default 10), TOOLHOST_BIN (skip build),
#        CARGO_TARGET_DIR (where the release build goes).
set -euo pipefail

cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-/tmp/toolhost-bench}
RUNS=${RUNS:-10}
TARGET_DIR=${CARGO_TARGET_DIR:-target}

# --- tools -------------------------------------------------------------------------------
need=()
command -v rg >/dev/null || need+=(ripgrep)
command -v fdfind >/dev/null || command -v fd >/dev/null || need+=(fd-find)
command -v hyperfine >/dev/null || need+=(hyperfine)
[[ -x /usr/bin/time ]] || need+=(time)
if ((${#need[@]})); then
    echo "installing ${need[*]} from Debian's packages" >&2
    apt-get update -qq >/dev/null
    apt-get install -y -qq "${need[@]}" >/dev/null || apt-get install -y -qq ripgrep fd-find >/dev/null
    # hyperfine and GNU time are optional: without them a timing loop is used, RSS is skipped.
fi
FD=$(command -v fdfind || command -v fd)

if [[ -z "${TOOLHOST_BIN:-}" ]]; then
    cargo build --release -p toolhost >&2
    TOOLHOST_BIN="$TARGET_DIR/release/toolhost"
    scripts/hot-symbols-check.sh "$TOOLHOST_BIN"
fi
BIN=$(realpath "$TOOLHOST_BIN")

# --- data ----------------------------------------------------------------------------------
TREE="$BENCH_DIR/tree"
BIG="$BENCH_DIR/big"
mkdir -p "$BENCH_DIR" "$BIG"

if [[ ! -f "$TREE/.done" ]]; then
    echo "generating the source tree in $TREE" >&2
    rm -rf "$TREE"
    python3 - "$TREE" <<'PY'
import os, random, sys
root = sys.argv[1]
random.seed(42)
words = ("let mut value result config error handler request response buffer index count "
         "return match some none self struct impl trait async await spawn parse format write "
         "read open close path file folder stream token cursor offset length capacity").split()
exts = [".rs", ".py", ".js", ".ts", ".md", ".txt", ".go", ".c"]
files = 0
for a in range(24):
    for b in range(24):
        folder = os.path.join(root, f"pkg{a:02}", f"mod{b:02}")
        os.makedirs(folder, exist_ok=True)
        for c in range(70):
            lines = []
            for n in range(random.randint(30, 160)):
                indent = "    " * random.randint(0, 3)
                lines.append(indent + " ".join(random.choices(words, k=random.randint(3, 12))))
            if random.random() < 0.01:
                lines.insert(random.randrange(len(lines)), f"    // needle_{files} marks this file")
            ext = exts[(a + b + c) % len(exts)]
            with open(os.path.join(folder, f"file{c:03}{ext}"), "w") as f:
                f.write("\n".join(lines) + "\n")
            files += 1
print(files, "files", file=sys.stderr)
PY
    touch "$TREE/.done"
fi

GB_FILE="$BIG/one_gb.txt"
GB_LINES=12000000
if [[ ! -f "$GB_FILE" ]]; then
    echo "generating $GB_FILE" >&2
    seq -f 'line %010g lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor' \
        1 "$GB_LINES" >"$GB_FILE"
fi
MB_FILE="$BIG/hundred_mb.base"
if [[ ! -f "$MB_FILE" ]]; then
    echo "generating $MB_FILE" >&2
    seq -f 'row %09g some filler text that makes the line a little longer, as code lines are' \
        1 1250000 >"$MB_FILE"
fi
K=$((GB_LINES / 2))

# --- measuring -------------------------------------------------------------------------------
RESULTS="$BENCH_DIR/results.tsv"
: >"$RESULTS"

# measure NAME PREPARE CMD: mean seconds of CMD over $RUNS runs (PREPARE before each, untimed).
measure() {
    local name=$1 prepare=$2 cmd=$3 mean
    if command -v hyperfine >/dev/null; then
        local json="$BENCH_DIR/$name.json"
        local args=(--warmup 2 --runs "$RUNS" --export-json "$json" --style none)
        [[ -n "$prepare" ]] && args+=(--prepare "$prepare")
        hyperfine "${args[@]}" "$cmd" >/dev/null
        mean=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["median"])' "$json")
    else
        local times=() start end
        for ((i = 0; i < RUNS + 2; i++)); do
            [[ -n "$prepare" ]] && bash -c "$prepare"
            start=$(date +%s%N)
            bash -c "$cmd" >/dev/null
            end=$(date +%s%N)
            ((i >= 2)) && times+=($((end - start)))
        done
        mean=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.6f", a[int((NR+1)/2)]/1e9}')
    fi
    printf '%s\t%s\n' "$name" "$mean" >>"$RESULTS"
}

call() { # call TOOL JSON: the command line of one toolhost call in $TREE
    printf "%q --workspace %q call %s %q" "$BIN" "$TREE" "$1" "$2"
}

echo "measuring ($RUNS runs each)" >&2
measure grep_files "" "$(call Grep '{"pattern":"needle_[0-9]+ marks"}')"
measure rg_files "" "cd $TREE && rg -l 'needle_[0-9]+ marks'"
measure grep_content "" "$(call Grep '{"pattern":"needle_[0-9]+ marks","output_mode":"content"}')"
measure rg_content "" "cd $TREE && rg -n 'needle_[0-9]+ marks'"
measure grep_common "" "$(call Grep '{"pattern":"handler\\s+request","output_mode":"count","include":"*.rs"}')"
measure rg_common "" "cd $TREE && rg -c -g '*.rs' 'handler\\s+request'"
measure glob_ext "" "$(call Glob '{"pattern":"*.rs"}')"
measure fd_ext "" "cd $TREE && $FD -t f -g '*.rs'"
measure glob_path "" "$(call Glob '{"pattern":"pkg0*/**/file00*.ts"}')"
measure fd_path "" "cd $TREE && $FD -t f -p -g '**/pkg0*/**/file00*.ts'"

READ_ARGS=$(printf '{"path":"%s","offset":%d,"limit":2000}' "$GB_FILE" "$K")
measure read_window "" "$(printf "%q --workspace %q call Read %q" "$BIN" "$BIG" "$READ_ARGS")"
measure tail_head "" "tail -n +$K $GB_FILE | head -n 2000"

WORK="$BIG/hundred_mb.txt"
EDIT_ARGS='{"path":"hundred_mb.txt","old_string":"row 000600000 ","new_string":"ROW 000600000 "}'
measure edit_unique "cp $MB_FILE $WORK" "$(printf "%q --workspace %q call Edit %q --yes" "$BIN" "$BIG" "$EDIT_ARGS")"
measure sed_inplace "cp $MB_FILE $WORK" "sed -i 's/row 000600000 /ROW 000600000 /' $WORK"

# Memory of the Read window: the maximum resident set size, when GNU time is there.
READ_RSS=""
if [[ -x /usr/bin/time ]]; then
    READ_RSS=$(/usr/bin/time -f '%M' "$BIN" --workspace "$BIG" call Read "$READ_ARGS" 2>&1 >/dev/null | tail -n 1)
fi

# --- report ----------------------------------------------------------------------------------
python3 - "$RESULTS" "$READ_RSS" <<'PY'
import sys
times = dict(line.split("\t") for line in open(sys.argv[1]).read().split("\n") if line)
times = {name: float(value) for name, value in times.items()}
rows = [
    ("Grep files_with_matches (rare)", "grep_files", "rg -l", "rg_files", 1.25),
    ("Grep content (rare)", "grep_content", "rg -n", "rg_content", 1.25),
    ("Grep count, include *.rs (common)", "grep_common", "rg -c -g", "rg_common", 1.25),
    ("Glob *.rs", "glob_ext", "fd -g '*.rs'", "fd_ext", 1.25),
    ("Glob pkg0*/**/file00*.ts", "glob_path", "fd -p -g", "fd_path", 1.25),
    ("Read 2000 lines @ middle of 1 GB", "read_window", "tail | head", "tail_head", 0.70),
    ("Edit unique string, 100 MB", "edit_unique", "sed -i", "sed_inplace", 1.00),
]
print(f"{'task':36} {'toolhost':>10} {'reference':>14} {'ref time':>10} {'ratio':>7} {'target':>7}")
for task, ours, ref_name, ref, target in rows:
    ratio = times[ours] / times[ref]
    verdict = "ok" if ratio <= target else "MISSED"
    print(f"{task:36} {times[ours]*1000:8.1f}ms {ref_name:>14} {times[ref]*1000:8.1f}ms "
          f"{ratio:7.2f} {target:7.2f} {verdict}")
if sys.argv[2]:
    print(f"Read window max RSS: {int(sys.argv[2]) / 1024:.1f} MB")
PY

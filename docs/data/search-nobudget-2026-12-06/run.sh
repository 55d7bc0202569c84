#!/usr/bin/env bash
# run.sh -- the search without a budget (and K = 1, 4, 8 side by side) on the simulator's
# spaces and on the spaces written apart from it, 200 spaces of 200 cells or more a set.
#   OUT=dir JOBS=16 run.sh BIN "SIM_SEEDS" "HO_SEEDS"
# writes sim-S.txt and ho-S.txt into OUT (gauntlet-search-bench --budget-share 0 --verbose).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-.}
JOBS=${JOBS:-2}
bin=$1 sims=$2 hos=$3
mkdir -p "$OUT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
run() {
        local name=$1
        shift
        local start
        start=$(date +%s)
        local rc=0
        "$bin" "$@" --budget-share 0 --jobs "$JOBS" --verbose >"$OUT/$name.txt" 2>"$OUT/$name.err" || rc=$?
        [ "$rc" = 0 ] || { echo "$name: the bench exited $rc: $(tail -n 1 "$OUT/$name.err")" >&2; return 1; }
        rm -f "$OUT/$name.err"
        echo "$name: $(grep -m1 '^  search  ' "$OUT/$name.txt") ($(($(date +%s) - start)) s)"
}
for s in $sims; do
        run "sim-$s" --spaces 200 --seed "$s" --min-cells 200
done
for s in $hos; do
        python3 "$here/../heldout-spaces-2026-12-06/gen.py" --seed "$s" --spaces 200 --min-cells 200 >"$tmp/ho$s.jsonl"
        run "ho-$s" --space-file "$tmp/ho$s.jsonl"
done

#!/usr/bin/env bash
# run.sh -- the runs of docs/search.md "Numbers alike by rank" (2026-12-06): the search with
# and without the speed kernel's likeness by rank, at a hard 10% and 5% of the grid, on the
# simulator's spaces (seeds 1-3) and on the spaces written apart from it
# (../heldout-spaces-2026-12-06/gen.py, seeds 1-3), 200 spaces of 200 cells or more each.
#   OUT=dir JOBS=16 run.sh "SEEDS" "SHARES" NAME BIN "VARS" [NAME BIN "VARS"]...
# writes NAME-simS-bSHARE.txt and NAME-hoS-bSHARE.txt into OUT; VARS: the environment the
# bench runs with (experiment.patch's variables), "" for none.
set -u
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-.}
JOBS=${JOBS:-2}
seeds=$1 shares=$2
shift 2
mkdir -p "$OUT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for s in $seeds; do
        python3 "$here/../heldout-spaces-2026-12-06/gen.py" --seed "$s" --spaces 200 --min-cells 200 >"$tmp/ho$s.jsonl"
done
while [ $# -ge 3 ]; do
        name=$1 bin=$2 vars=$3
        shift 3
        for s in $seeds; do
                for b in $shares; do
                        for set in sim ho; do
                                if [ $set = sim ]; then src="--spaces 200 --seed $s --min-cells 200"; else src="--space-file $tmp/ho$s.jsonl"; fi
                                start=$(date +%s)
                                # shellcheck disable=SC2086
                                env $vars "$bin" $src --budget-share "$b" --budget-only --jobs "$JOBS" --verbose \
                                        >"$OUT/$name-$set$s-b$b.txt" 2>/dev/null
                                echo "$name $set$s b$b: $(grep 'search (budget' "$OUT/$name-$set$s-b$b.txt" | head -1) ($(($(date +%s) - start)) s)"
                        done
                done
        done
done

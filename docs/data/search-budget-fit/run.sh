#!/usr/bin/env bash
# run.sh -- the runs behind docs/search.md "Where the hard caps are lost":
#   BIN=build/bin/gauntlet-search-bench OUT=dir JOBS=2 run.sh "SEEDS" "SHARES"
# one output per seed and share, s$SEED-b$SHARE.txt; each ends with the table "budgeted
# success by the budget against the speed model's parameters".
set -u
BIN=${BIN:-build/bin/gauntlet-search-bench}
OUT=${OUT:-.}
JOBS=${JOBS:-2}
mkdir -p "$OUT"
for s in ${1:-1 2 3}; do
        for b in ${2:-0.05 0.1}; do
                "$BIN" --spaces 200 --seed "$s" --min-cells 200 --budget-share "$b" --budget-only \
                        --jobs "$JOBS" >"$OUT/s$s-b$b.txt" 2>/dev/null
                echo "seed $s, $b: $(grep -A2 'budgeted success by' "$OUT/s$s-b$b.txt" | tail -1)"
        done
done

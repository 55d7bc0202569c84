#!/usr/bin/env bash
# The runs of docs/search.md "The knowledge gradient" (2026-12-05): .device/bench is
# gauntlet-search-bench built from 1bcd755 with experiment.patch applied; run on a 16-core host.
# usage: run.sh SHARE "SEEDS" name "VARS" [name "VARS"]...
share=$1; seeds=$2; shift 2
mkdir -p "$OUT"
while [ $# -gt 0 ]; do
  name=$1; vars=$2; shift 2
  for s in $seeds; do
    start=$(date +%s)
    env $vars .device/bench --spaces 200 --seed $s --min-cells 200 --budget-share $share --budget-only --jobs 16 > "$OUT/$name-s$s-b$share.txt" 2>&1
    echo "$name s$s b$share: $(grep 'search (budget' "$OUT/$name-s$s-b$share.txt" | head -1) ($(( $(date +%s) - start ))s)"
  done
done

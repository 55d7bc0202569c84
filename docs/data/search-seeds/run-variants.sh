#!/usr/bin/env bash
# run-variants.sh -- the runs behind docs/search.md "Three seeds, and what 5% allows".
# Build gauntlet-search-bench from a tree with experiment.patch applied (the shipped search
# unless a T_* variable is set; SB_SKIP_K leaves out the K = 4 and 8 rows, SB_DUMP adds a
# DUMP line per space), pack it (tools/pack-prebuilt.sh .device gauntlet-search-bench),
# then on the GPU host's 16 CPUs (each run 25-60 s):
#   run-variants.sh SHARE SEED NAME:"ENV=VALUE ..." ...
#   e.g. run-variants.sh 0.1 1 A: R5:"T_RIDER=1 T_POWER=0.5"
share=$1; seed=$2; shift 2
export LD_LIBRARY_PATH=$PWD/.device/lib SB_SKIP_K=1
mkdir -p "$OUT"
for v in "$@"; do
        name=${v%%:*}; envs=${v#*:}
        start=$SECONDS
        # shellcheck disable=SC2086 # the variables of one variant, split on purpose
        env $envs .device/bin/gauntlet-search-bench --spaces 200 --seed "$seed" --min-cells 200 \
                --budget-share "$share" --jobs 16 >"$OUT/$name-s$seed-b$share.txt" 2>/dev/null
        echo "== $name ($envs) share $share seed $seed: $((SECONDS - start)) s"
        sed -n '/spaces of >= 200/,/^$/p' "$OUT/$name-s$seed-b$share.txt" | grep -E "^  search"
done

#!/usr/bin/env bash
# run-variants.sh -- the runs behind docs/search.md "Measuring again under a budget".
# Build gauntlet-search-bench from a tree with experiment.patch applied (against f48d687;
# the shipped search unless a T_* variable is set: T_CBSHARE the budget's last share in
# which measuring again comes first, T_RCMP measuring again first whenever the risk of the
# named best is at least that many times the chance that a cell not launched beats it;
# SB_SKIP_K leaves out the K = 4 and 8 rows, SB_SKIP_GRID the grid), then, on 2 cores
# (each run 4-8 minutes):
#   BIN=build/bin/gauntlet-search-bench run-variants.sh SHARE SEED NAME "ENV=VALUE ..." ...
#   e.g. run-variants.sh 0.1 1 base X=1 cb20 T_CBSHARE=0.2
share=$1; seed=$2; shift 2
while [ $# -ge 2 ]; do
        name=$1; envs=$2; shift 2
        start=$SECONDS
        # shellcheck disable=SC2086 # the variables of one variant, split on purpose
        env SB_SKIP_K=1 $envs "$BIN" --spaces 200 --seed "$seed" --min-cells 200 --budget-share "$share" \
                --jobs 2 --verbose >"$name-s$seed-b$share.txt" 2>/dev/null
        echo "== $name ($envs) seed $seed share $share: $((SECONDS - start)) s"
        grep -E '^  search ' "$name-s$seed-b$share.txt" | head -2
done

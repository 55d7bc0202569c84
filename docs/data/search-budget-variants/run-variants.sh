#!/usr/bin/env bash
# run-variants.sh -- the runs behind docs/search.md "Under a budget, more tried".
# Build gauntlet-search-bench from a tree with experiment.patch applied (against the commit
# that adds it: the shipped search unless a T_* variable is set), then, on 2 cores (each
# seed 1-3 minutes with --budget-only):
#   BIN=build/bin/gauntlet-search-bench run-variants.sh SHARE NAME "ENV=VALUE ..." [SEEDS]
#   e.g. run-variants.sh 0.1 full T_FULL=1
# The variables: T_MONO (memory weights monotone in an axis's numbers), T_ARD=N (memory:
# N rounds of a per-axis prior scale), T_MEMPREC (memory: the weights' prior precision,
# 0.25 shipped), T_REL (speed: per-axis relevance by marginal likelihood; T_REL_TAU the
# log-normal prior's sd, T_REL_MIN the figures it needs), T_FULL (with a budget, the next
# candidate where the search would stop), T_LEFT (with a budget, measuring again where it
# would stop: T_LRISK the total risk, T_LPICK one cell's chance, 0.01 and 0.005 unless set),
# T_LEAN (a value that never loaded goes beside another partner than its OOM cells shared).
share=$1; name=$2; envs=$3; seeds=${4:-1 2 3}
line="$name ($envs) share $share:"
for seed in $seeds; do
        out=$name-s$seed-b$share.txt
        # shellcheck disable=SC2086 # the variables of one variant, split on purpose
        env $envs "$BIN" --spaces 200 --seed "$seed" --min-cells 200 --budget-share "$share" --budget-only \
                --jobs 2 --verbose >"$out" 2>/dev/null
        line="$line s$seed $(grep -E '^  search \(budget' "$out" | head -1 | awk '{print $4, $5}')"
done
echo "$line"

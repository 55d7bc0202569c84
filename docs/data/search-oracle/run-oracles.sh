#!/usr/bin/env bash
# run-oracles.sh -- the runs behind docs/search.md "What a perfect failure model would give".
# Build gauntlet-search-bench from a tree with experiment.patch applied (it applies to the
# commit that adds it, and holds the variables of ../search-budget-variants/experiment.patch
# too; with none set it is the shipped search: none-s1-b0.1.txt), then, on 2 cores (about a
# minute a seed):
#   BIN=build/bin/gauntlet-search-bench run-oracles.sh [SHARES] [SEEDS]
# The new variables, each an oracle the simulator passes to the search (the model is fitted
# as shipped; only the chance named is replaced by the truth):
#   T_ORACLE_FEAS   a cell's chance to serve right is 1 or 0, as it will be
#   T_ORACLE_OOM    its chance to run out of memory is 1 or 0 (the rest modelled)
#   T_ORACLE_RULES  every failure but running out of memory is known; memory modelled
#   T_ORACLE_NOISE  the simulator's launches have no noise (the model still allows some)
# and the variants tried (bma*, xi*, pfpow*, nocost*): T_BMA (the memory model averaged over which
# axes cost memory, by their Laplace evidence; T_BMA_PI the prior share of such axes,
# T_MEMPREC the weights' precision), T_XI (expected improvement over the best plus XI),
# T_PFPOW (the chance to serve to this power in the choice: pfpow*) and T_NOCOST (the choice
# per launch, not per second of launch: nocost*).
# T_FAILSTAT, T_TRACE and T_BOUND print diagnostics on stderr.
shares=${1:-0.1 0.05}; seeds=${2:-1 2 3}
here=$(dirname "$0")
run=$here/../search-budget-variants/run-variants.sh
for share in $shares; do
        bash "$run" "$share" ofeas T_ORACLE_FEAS=1 "$seeds"
        bash "$run" "$share" ooom T_ORACLE_OOM=1 "$seeds"
        bash "$run" "$share" orules T_ORACLE_RULES=1 "$seeds"
        bash "$run" "$share" onoise T_ORACLE_NOISE=1 "$seeds"
        bash "$run" "$share" oboth "T_ORACLE_FEAS=1 T_ORACLE_NOISE=1" "$seeds"
done

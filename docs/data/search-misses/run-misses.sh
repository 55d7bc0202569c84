#!/usr/bin/env bash
# run-misses.sh -- the runs behind docs/search.md "Where the budget's misses are".
# Build gauntlet-search-bench from a tree with experiment.patch applied (against 14a582a;
# with no T_* variable set it is the shipped search), then (1-3 minutes a set on 2 cores):
#   BIN=build-exp/bin/gauntlet-search-bench run-misses.sh
# It carries the variables of docs/data/search-oracle/experiment.patch and adds:
#   T_BESTPF=1   at the budgeted search's end, a line on stderr per space: the named cell's
#                share of the best (named=), whether the true best was launched, the model's
#                chance that it serves (pf=), its predicted figure against its truth
#                (mean_ratio=), and (BESTVALS) how many of the best's values never served
#   T_DOM=D      a cell the memory model gives 50% or more to run out (T_DOMP) is not
#                launched while it is no leaner, value by value by the fitted weights less
#                D, than a cell that ran out; T_DOMSTOP=1 leaves its chance out of the stop
#   T_COVERLEAN=D T_COVERFIRST=1 T_COVERDEF=1
#                before it stops, a value that ran out of memory and never loaded gets one
#                cell with as many other axes at their defaults as may serve, unless a cell
#                that ran out holding it was as lean (equal or the default on every axis)
#   T_ORD=RHO    the speed kernel's axes of numbers: values r ranks apart alike by RHO^r
#   T_BCOVER=F   with a budget, the cover of "Next cell" (a value that never served) comes
#                first once the launches left are at most F per such value plus the tenth
#                kept for measuring again
#   T_MEMSPEED=S once memory ran out somewhere, the speed kernel adds S times the product of
#                two cells' memory scores (the memory model's sum of their values' weights,
#                centred): a slope, learnt from the figures, of speed on what a cell costs
# The outputs made before 25e5667 print the needle table's older count (38 spaces, pairs
# holding a default counted); their search rows are unchanged by it.
set -e
here=$(dirname "$0")
run() { BIN=$BIN "$here/../search-budget-variants/run-variants.sh" "$@"; }
run 0.1 dom05s "T_DOM=0.5 T_DOMSTOP=1"
run 0.05 dom05s "T_DOM=0.5 T_DOMSTOP=1"
run 0.1 dom05 "T_DOM=0.5" 1
run 0.1 cd "T_COVERLEAN=0.5 T_COVERFIRST=1 T_COVERDEF=1"
run 0.05 cd "T_COVERLEAN=0.5 T_COVERFIRST=1 T_COVERDEF=1"
run 0.1 domcd "T_DOM=0.5 T_DOMSTOP=1 T_COVERLEAN=0.5 T_COVERFIRST=1 T_COVERDEF=1"
run 0.05 domcd "T_DOM=0.5 T_DOMSTOP=1 T_COVERLEAN=0.5 T_COVERFIRST=1 T_COVERDEF=1"
run 0.1 domcdfull "T_DOM=0.5 T_DOMSTOP=1 T_COVERLEAN=0.5 T_COVERFIRST=1 T_COVERDEF=1 T_FULL=1"
run 0.05 domcdfull "T_DOM=0.5 T_DOMSTOP=1 T_COVERLEAN=0.5 T_COVERFIRST=1 T_COVERDEF=1 T_FULL=1"
run 0.1 ord05 "T_ORD=0.5"
run 0.05 ord05 "T_ORD=0.5"
run 0.1 bcover "T_BCOVER=1"
run 0.05 bcover "T_BCOVER=1"
run 0.1 bcover2 "T_BCOVER=2" 1
run 0.1 memspeed0.005 "T_MEMSPEED=0.005"
run 0.05 memspeed0.005 "T_MEMSPEED=0.005"
for seed in 1 2 3; do
        T_BESTPF=1 "$BIN" --spaces 200 --seed "$seed" --min-cells 200 --budget-share 0.1 --budget-only \
                >/dev/null 2>"bestpf-s$seed-b0.1.txt"
done

#!/usr/bin/env bash
# run-lines.sh -- the runs behind docs/search.md "Failed launches against the search before
# #33". Builds gauntlet-search-bench twice from this checkout: as it is (the search now) and
# with the search of 10d92e7 (src/06-matrix/search.c then, before failures were read by their
# lines), both with this checkout's simulator; then runs each on three sets of 200 spaces of
# 200 cells or more, without a budget (--budget-share 1: a budget of the whole grid) and with
# 10% of the grid. The outputs land in the current
# directory's lines-{new,old}-sS-bB.txt. About 25 minutes on 2 cores. SPACES, SEEDS and SHARES
# (200, "1 2 3", "1 0.1") make a smaller run.
#
# experiment.patch (against 9542400; with no T_* variable set it names the best in the same
# spaces as the shipped search, though not launch for launch: seed 1 at 10%, the same 17
# misses, medians of hours and failed launches 11.0 and 8 against the shipped 10.9 and 9) holds
# the variables of docs/data/search-misses/experiment.patch and the experiments of
# docs/search.md from "Failed launches against the search before #33" on:
#   T_FAILSTAT=1   a FAILSTAT line per search on stderr (sum-failstat.py reads them), with the
#                  class of its space's lines
#   T_MENTION=P    a word of a failure's line that is a value of one axis only, the cell's, of
#                  letters, not a common word, blames that value with prior P (a suspect);
#                  T_MENTION2=1 also where the cell holds it on one axis only, digits and '_'
#                  allowed
#   T_TS=1|2       with a budget, the next cell by one draw of the speed model (Thompson
#                  sampling): 1 the draw's improvement times the chance to serve, per second;
#                  2 the draw alone among cells drawn to serve; T_TS_FRAC=F for the first F
#                  of the budget only; T_TSFULL=1 spends the whole budget, as T_FULL
#   T_NOBUDGET=1   the search ignores its budget (--budget-share 1 then runs it without one)
#   T_STOP=C       it stops when the chances left add up to less than C (0.03 shipped)
#   T_NONEIGH=1, T_NOCOVER=1  the best's neighbours, the cell of a value that never served,
#                  are not launched before the stop
set -euo pipefail
root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
out=$PWD
old=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$old" >/dev/null 2>&1 || true' EXIT
git -C "$root" worktree add -f --detach "$old" HEAD >/dev/null
git -C "$root" show 10d92e7:src/06-matrix/search.c |
        sed 's|"06-matrix/search.h"|"search/search.h"|; s|"02-text/buf.h"|"text/buf.h"|; s|"01-base/util.h"|"base/util.h"|' \
                >"$old/src/search/search.c"
make -C "$old" -s BUILD=build-old build-old/bin/gauntlet-search-bench -j2
make -C "$root" -s build/bin/gauntlet-search-bench -j2
cp "$old/build-old/bin/gauntlet-search-bench" "$out/bench-old"
cp "$root/build/bin/gauntlet-search-bench" "$out/bench-new"
for share in ${SHARES:-1 0.1}; do
        for seed in ${SEEDS:-1 2 3}; do
                for v in new old; do
                        "$out/bench-$v" --spaces "${SPACES:-200}" --seed "$seed" --min-cells 200 --budget-share "$share" \
                                --budget-only --jobs 2 --verbose >"$out/lines-$v-s$seed-b$share.txt" 2>/dev/null
                done
        done
done
rm -f "$out/bench-old" "$out/bench-new"

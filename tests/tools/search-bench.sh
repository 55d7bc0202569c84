#!/usr/bin/env bash
# tests/tools/search-bench.sh -- gauntlet-search-bench's options: --budget-only runs the
# budgeted rows alone; it and --trace-budget refuse a share of 0; --trace-budget (and
# --budget-only with --space) prints the budgeted search's launches, as many as its summary
# says; a list's output is the same on 1 thread and on 2.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="$here/${BUILD:-build}/bin/gauntlet-search-bench"
[ -x "$bin" ] || { echo "FAIL: $bin is not built"; exit 1; }
fail() { echo "FAIL: $*"; exit 1; }

rc=0
out=$("$bin" --budget-only --budget-share 0 2>&1) || rc=$?
[ "$rc" -eq 2 ] || fail "--budget-only with a share of 0 exited $rc"
grep -q -- '--budget-only needs a --budget-share above 0' <<<"$out" || fail "no one-line reason: $out"
rc=0
out=$("$bin" --space 3 --trace-budget --budget-share 0 2>&1) || rc=$?
[ "$rc" -eq 2 ] || fail "--trace-budget with a share of 0 exited $rc"
grep -q -- '--trace-budget needs a --budget-share above 0' <<<"$out" || fail "no one-line reason: $out"
echo "ok: --budget-only and --trace-budget refuse a share of 0"

one=$("$bin" --spaces 3 --seed 7 --min-cells 200 --budget-only --jobs 1 2>/dev/null)
two=$("$bin" --spaces 3 --seed 7 --min-cells 200 --budget-only --jobs 2 2>/dev/null)
[ "$one" = "$two" ] || fail "--jobs 1 and --jobs 2 differ"
grep -qE '^  search \(budget 10%\) +[0-9.]+%' <<<"$one" || fail "no budgeted search row: $one"
! grep -qE '^  search +[0-9.]+%' <<<"$one" || fail "--budget-only ran the search without a budget"
! grep -q 'side by side' <<<"$one" || fail "--budget-only ran the rows side by side"
echo "ok: --budget-only runs the budgeted rows alone, the same on 1 and 2 threads"

trace=$("$bin" --space 3 --budget-share 0.1 --trace-budget 2>/dev/null)
launches=$(grep -E '^  search \(budget 10%\) ' <<<"$trace" | grep -oE '[0-9]+ launches' | grep -oE '^[0-9]+')
steps=$(awk '/^search trajectory/{on=1; next} on && /^ +[0-9]+ +cell /{n++} on && /^$/{exit} END{print n+0}' <<<"$trace")
[ "${launches:-0}" -gt 0 ] || fail "no budgeted search in the summary: $trace"
[ "$steps" -eq "$launches" ] || fail "--trace-budget printed $steps launches, the summary says $launches"
plain=$("$bin" --space 3 --budget-share 0.1 2>/dev/null)
nb=$(grep -E '^  search +(success|FAIL) ' <<<"$plain" | grep -oE '[0-9]+ launches' | grep -oE '^[0-9]+')
psteps=$(awk '/^search trajectory/{on=1; next} on && /^ +[0-9]+ +cell /{n++} on && /^$/{exit} END{print n+0}' <<<"$plain")
[ "$psteps" -eq "$nb" ] || fail "without --trace-budget the trajectory has $psteps launches, the search $nb"
only=$("$bin" --space 3 --budget-share 0.1 --budget-only 2>/dev/null)
osteps=$(awk '/^search trajectory/{on=1; next} on && /^ +[0-9]+ +cell /{n++} on && /^$/{exit} END{print n+0}' <<<"$only")
[ "$osteps" -eq "$launches" ] || fail "--space with --budget-only printed $osteps launches, not the budgeted $launches"
echo "ok: --trace-budget prints the budgeted search's $launches launches (the search without a budget: $nb)"

#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# search-budget.sh -- a search's budgets, said and counted right: a time budget that ends the
# search is said as time ("time budget of 1s spent", not "budget of 2 launches"); abandoned
# launches count against budget.launches, and the reports show them as such; a launch
# budget under 1.5 times the values' effects to learn is said before the first launch.
. "$SRCDIR/tests/lib.sh"

matrix() { # budget
        cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-{port}", --load-time, "1"]
startup_timeout: 10s
stop_timeout: 2s
probes: false
axes:
  delay:
    values:
      - {name: d20, args: [--token-delay-ms, "20"]}
      - {name: d5, args: [--token-delay-ms, "5"]}
  x:
    flag: --model
    values: [m1, m2]
strategy: search
budget: $1
bench: {concurrency: [1], output_tokens: 8, requests: 2, warmup: 0}
objective: output_tokens_per_s@1
emit: []
YAML
}
settled() { sqlite3 "$tmp/j.db" "SELECT count(*) FROM attempts WHERE state = 'settled' AND verdict != 'skipped'"; }

# every launch loads for 1 s: a budget of 1 s is spent by the first
matrix "{time: 1s}"
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "the search failed"; }
grep -q "^search: time budget of 1s spent after 1 launch; the cells not launched are pruned" "$tmp/out" ||
        { cat "$tmp/out"; fail "the time budget is not said as time"; }
! grep -q "budget of [0-9]* launch" "$tmp/out" || fail "a time budget said as launches"
[ "$(settled)" = 1 ] || fail "$(settled) launches under a 1 s budget"

# two abandoned launches of a cell not yet launched: with budget.launches 3, 1 + 2 spend it
cell=$(sqlite3 "$tmp/j.db" "SELECT cell_id FROM sweep_cells WHERE cell_id NOT IN (SELECT cell_id FROM attempts WHERE state = 'settled' AND verdict != 'skipped') LIMIT 1")
sweep=$(sqlite3 "$tmp/j.db" "SELECT max(id) FROM sweeps")
for why in "interrupted by a signal" "port taken"; do
        sqlite3 "$tmp/j.db" "INSERT INTO attempts (sweep_id, cell_id, state, started_wall, abandon_reason, workload) VALUES ($sweep, '$cell', 'abandoned', 1, '$why', (SELECT workload_hash FROM sweeps WHERE id = $sweep))"
done
matrix "{launches: 3}"
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out2" 2>&1 || { cat "$tmp/out2"; fail "the continued search failed"; }
grep -q "^search: budget of 3 launches spent" "$tmp/out2" || { cat "$tmp/out2"; fail "abandoned launches did not count"; }
# 3 launches for 4 cells whose values' effects take 3 (1 + 1 + 1): the run says the budget is tight
grep -q "^gauntlet: search: a budget of 3 launches is under 1.5 times the 3 it takes to learn each value's effect" \
        "$tmp/out2" || { cat "$tmp/out2"; fail "no notice of a tight budget"; }
! grep -q "it takes to learn each value's effect" "$tmp/out" || fail "a notice of a tight budget under a time budget"
[ "$(settled)" = 1 ] || fail "a launch past a budget spent by abandoned launches ($(settled) settled)"
# the reports say which launches were abandoned, and not as measuring a cell again
"$GAUNTLET" report "$tmp/j.db" >"$tmp/report.txt" 2>&1 || fail "report"
grep -q "^search: 1 of 4 cells launched (budget 3), 3 launches (2 abandoned)," "$tmp/report.txt" ||
        { cat "$tmp/report.txt"; fail "the search's summary miscounts the abandoned launches"; }
grep -q "^${cell:0:8}[0-9a-f]*: abandoned launches: 2, the latest: port taken$" "$tmp/report.txt" ||
        { cat "$tmp/report.txt"; fail "the cell's abandoned launches not shown"; }
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/report.json" 2>&1 || fail "report json"
jq -e --arg c "$cell" '.search.abandoned == 2 and .search.launches == 3 and
        ([.cells[] | select(.id == $c) | [.abandoned, .abandon_reason]] == [[2, "port taken"]]) and
        ([.cells[] | select(.id != $c) | .abandoned] | all(. == null))' "$tmp/report.json" >/dev/null ||
        fail "the JSON report's abandoned launches"
"$GAUNTLET" report --format markdown "$tmp/j.db" | grep -q "^- \`$cell\`: \`abandoned launches: 2, the latest: port taken\`$" ||
        fail "the Markdown report's abandoned launches"
matrix "{launches: 4}"
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out3" 2>&1 || { cat "$tmp/out3"; fail "the larger budget failed"; }
[ "$(settled)" = 2 ] || { cat "$tmp/out3"; fail "a budget of 4 with 3 spent launched $(($(settled) - 1)) more, want 1"; }
! grep -q "it takes to learn each value's effect" "$tmp/out3" || fail "a notice of a tight budget that covers every cell"
expect_none_alive "processes left"
echo "search-budget.sh: all good"

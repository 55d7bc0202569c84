#!/usr/bin/env bash
# tier: slurm (tests/run slurm)
# search-slurm.sh -- strategy: search side by side through a real Slurm (one node on
# localhost, tests/slurm-lib.sh), slurm.max_parallel 3: three workers choose cells from the
# one journal, each with the others' cells in flight (docs/search.md, "Several at once").
# On a 4 x 3 testbed space (one backend that serves beside one that crashes for the arch,
# one out of memory and one garbage; three token delays, so one fastest cell) with a budget
# of 8 launches it asserts, from the journal: cells ran at once; no cell ran twice at once,
# and one launched again was measured again on purpose (it served, its line says so); the
# launches stay within the budget; and the search's best is the grid's best of the same
# space, run through the same Slurm. Skipped (77) as slurm.sh is.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/slurm-lib.sh"

slurm_start 8

matrix() { # file strategy-lines
        cat >"$1" <<YAML
engine: testbed
args: [--device-arch, sm_120, --mem-budget, 24M, --threads, "1", --slow-load, "2"]
startup_timeout: 60s
request_timeout: 30s
stop_timeout: 5s
launcher: slurm
slurm: {max_parallel: 3, time: 10m, gpus_per_cell: 0}
axes:
  moe:
    flag: --moe-backend
    values: [nvfp4, tcgen05, nvfp4-swizzled, shuffled]
  delay:
    flag: --token-delay
    values: [40ms, 15ms, 3ms]
checks: default
bench: {concurrency: [1], input_tokens: 8, output_tokens: 16, requests: 2, warmup: 0}
objective: output_tokens_per_s@1
$2
YAML
}

# The grid of the same space, through the same Slurm: its best is the answer.
matrix "$tmp/grid.yaml" ""
"$GAUNTLET" run "$tmp/grid.yaml" --journal "$tmp/grid.db" >"$tmp/grid.out" 2>&1 || [ $? -eq 1 ] ||
        { cat "$tmp/grid.out"; fail "the grid failed"; }
"$GAUNTLET" report --format json "$tmp/grid.db" >"$tmp/grid.json"
grid_best=$(jq -r .best "$tmp/grid.json")
[ -n "$grid_best" ] && [ "$grid_best" != null ] || fail "the grid has no best: $(cat "$tmp/grid.out")"
axes() { jq -r --arg b "$2" '.cells[] | select(.id == $b) | "\(.axes.moe) \(.axes.delay)"' "$1"; }
[ "$(axes "$tmp/grid.json" "$grid_best")" = "nvfp4 3ms" ] || fail "the grid's best is $(axes "$tmp/grid.json" "$grid_best")"

# The search, three workers side by side.
matrix "$tmp/m.yaml" "strategy: search
budget: {launches: 8}"
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>"$tmp/err" || [ $? -eq 1 ] ||
        { cat "$tmp/out" "$tmp/err"; fail "the search failed"; }
cat "$tmp/out" "$tmp/err" >&2
grep -q "3 cells side by side, each a Slurm job" "$tmp/err" || fail "the search did not run side by side"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json"
launched="SELECT cell_id, started_wall, ended_wall FROM attempts WHERE state = 'settled' AND verdict != 'skipped'"
n=$(sqlite3 "$tmp/j.db" "SELECT count(*) FROM ($launched)")
[ "$n" -ge 3 ] && [ "$n" -le 8 ] || fail "$n launches with a budget of 8"
[ "$(jq -r .search.launches "$tmp/r.json")" = "$n" ] || fail "the report counts $(jq .search.launches "$tmp/r.json") launches, the journal $n"
# at least two launches overlapped in time
sqlite3 "$tmp/j.db" "SELECT started_wall, 1 FROM ($launched) UNION ALL SELECT ended_wall, -1 FROM ($launched) ORDER BY 1, 2" |
        awk -F'|' '{ n += $2; if (n > max) max = n } END { print max }' >"$tmp/overlap"
[ "$(cat "$tmp/overlap")" -ge 2 ] || fail "the search's cells never ran at once"
[ "$(cat "$tmp/overlap")" -le 3 ] || fail "$(cat "$tmp/overlap") cells ran at once, more than max_parallel 3"
# no cell ran twice at once; one launched twice served and was measured again on purpose
same=$(sqlite3 "$tmp/j.db" "SELECT count(*) FROM ($launched) a JOIN ($launched) b ON a.cell_id = b.cell_id
        AND a.rowid < b.rowid AND a.started_wall < b.ended_wall AND b.started_wall < a.ended_wall")
[ "$same" -eq 0 ] || fail "$same pairs of launches of one cell ran at once"
sqlite3 "$tmp/j.db" "SELECT cell_id, count(*) FROM attempts WHERE state = 'settled' AND verdict != 'skipped'
        GROUP BY cell_id" >"$tmp/per-cell"
again=$(awk -F'|' '$2 > 1 { n += $2 - 1 } END { print n + 0 }' "$tmp/per-cell")
[ "$again" -eq "$(grep -c 'measured again\]' "$tmp/out")" ] ||
        fail "$again launches of a cell again, $(grep -c 'measured again\]' "$tmp/out") said to be measured again"
[ "$(sqlite3 "$tmp/j.db" "SELECT count(*) FROM attempts WHERE state = 'settled' AND verdict NOT IN ('pass', 'skipped')
        AND cell_id IN (SELECT cell_id FROM attempts WHERE state = 'settled' AND verdict != 'skipped'
                        GROUP BY cell_id HAVING count(*) > 1)")" -eq 0 ] || fail "a cell that failed was launched again"
[ "$(sqlite3 "$tmp/j.db" "SELECT count(*) FROM attempts WHERE state = 'running'")" -eq 0 ] || fail "an attempt is left running"
# every cell accounted for, each once: launched, or pruned by worker 0 alone
[ "$(jq '.cells | length' "$tmp/r.json")" -eq 12 ] || fail "the report has $(jq '.cells | length' "$tmp/r.json") cells"
[ "$(sqlite3 "$tmp/j.db" "SELECT count(*) FROM attempts WHERE cause = 'pruned'")" -eq \
        "$(sqlite3 "$tmp/j.db" "SELECT count(DISTINCT cell_id) FROM attempts WHERE cause = 'pruned'")" ] || fail "a cell was pruned twice"
# the search's best is the grid's
best=$(jq -r .best "$tmp/r.json")
[ "$(axes "$tmp/r.json" "$best")" = "nvfp4 3ms" ] || fail "the search's best is $(axes "$tmp/r.json" "$best"), the grid's nvfp4 3ms"
[ "$(jq -r .search.named.cell "$tmp/r.json")" = "$best" ] || fail "search.named is not the best"
[ -z "$(slurm_active)" ] || fail "jobs left in the queue: $(slurm_active)"
[ -z "$(pgrep -f -- "--journal $tmp/j.db")" ] || fail "a gauntlet worker is left"
echo "search-slurm: $n launches of 12 cells, up to $(cat "$tmp/overlap") at once, best $(axes "$tmp/r.json" "$best")" >&2
echo "search-slurm.sh: all good"

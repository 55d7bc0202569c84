#!/usr/bin/env bash
# tier: slurm (tests/run slurm)
# search-slurm-kill.sh -- strategy: search through a real Slurm with four cells in flight
# (slurm.max_parallel 4), interrupted twice and resumed (docs/search.md, "Several at once"):
# Ctrl-C while four jobs run; resumed, then SIGKILL of gauntlet and its workers at once while
# jobs run (their sruns, in sessions of their own, and the jobs live on); resumed, then one
# worker alone killed while its job runs (the run must end, not wait for its cell); resumed
# to the end.
# A 4 x 3 x 2 testbed space (backends that serve, crash for the arch, run out of memory and
# answer garbage; three token delays; two GEMM backends), budget: {launches: 20}. It asserts,
# from the journal: no launch settled before an interruption is lost or changed by the
# next run; a cell that failed is never launched again, one that served only to be measured
# again; every launch, the abandoned ones included, counts against the budget and all of
# them stay within it; the jobs the killed run left are cancelled by the next, which says
# so; after Ctrl-C, after a worker was killed and at the end the queue is empty and no gauntlet or server process is
# left; every cell is accounted for once; the best served.
# Skipped (77) as slurm.sh is.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/slurm-lib.sh"

slurm_start 8

cat >"$tmp/m.yaml" <<YAML
engine: testbed
args: [--device-arch, sm_120, --mem-budget, 24M, --threads, "1", --slow-load, "3"]
startup_timeout: 60s
request_timeout: 30s
stop_timeout: 5s
launcher: slurm
slurm: {max_parallel: 4, time: 10m, gpus_per_cell: 0}
axes:
  moe:
    flag: --moe-backend
    values: [nvfp4, tcgen05, nvfp4-swizzled, shuffled]
  delay:
    flag: --token-delay
    values: [40ms, 15ms, 3ms]
  gemm:
    flag: --gemm-backend
    values: [reference, nvfp4]
checks: default
bench: {concurrency: [1], input_tokens: 8, output_tokens: 16, requests: 2, warmup: 0}
objective: output_tokens_per_s@1
strategy: search
budget: {launches: 20}
YAML

j=$tmp/j.db
q() { sqlite3 -cmd '.timeout 5000' "$j" "$1" || fail "cannot read the journal: $1"; }
# the same while a run writes it, in a loop that looks again: an unreadable moment is 0
poll_q() { sqlite3 -cmd '.timeout 5000' "$j" "$1" 2>/dev/null || echo 0; }
# launches: settled ones (a pruned or inferred cell is settled as skipped, never launched)
# and abandoned ones
launched="state = 'abandoned' OR (state = 'settled' AND verdict != 'skipped')"
settled_rows() { # every launch that settled, as it is in the journal
        sqlite3 -cmd '.timeout 5000' "$j" "SELECT id, cell_id, verdict, cause, ended_wall, bench FROM attempts
                WHERE state = 'settled' AND verdict != 'skipped' ORDER BY id"
}
wait_in_flight() { # pid settled-at-least: waits until that many launches settled and 2 run
        local i
        for i in $(seq 600); do
                [ "$(poll_q "SELECT count(*) FROM attempts WHERE state = 'settled' AND verdict != 'skipped'")" -ge "$2" ] &&
                        [ "$(poll_q "SELECT count(*) FROM attempts WHERE state = 'running'")" -ge 2 ] &&
                        [ "$(slurm_active | grep -c '|gauntlet-' || true)" -ge 2 ] && return 0
                kill -0 "$1" 2>/dev/null || return 1
                sleep 0.1
        done
        return 1
}
# no launch that settled before is missing or different now
kept() { # file-before what
        settled_rows >"$tmp/now"
        local lost
        lost=$(comm -23 <(sort "$1") <(sort "$tmp/now"))
        [ -z "$lost" ] || fail "$2 lost or changed settled launches: $lost"
}
no_gauntlet_left() { # what: waits up to 10 s for every gauntlet process of the journal to end
        local i
        for i in $(seq 100); do
                [ -z "$(pgrep -f -- "--journal $j")" ] && return 0
                sleep 0.1
        done
        fail "$1 left a gauntlet process: $(pgrep -af -- "--journal $j")"
}
none_left() { # what
        no_gauntlet_left "$1"
        expect_none_alive "$1 left a server" 5
}

# --- 1. Ctrl-C while jobs run: exit 130, every job cancelled --------------------------------
"$GAUNTLET" run "$tmp/m.yaml" --journal "$j" >"$tmp/out1" 2>&1 &
g=$!
echo "$g" >"$tmp/pids-g1"
wait_in_flight "$g" 2 || { cat "$tmp/out1"; fail "the first run never had two launches settled and two in flight"; }
grep -q "4 cells side by side, each a Slurm job" "$tmp/out1" || { cat "$tmp/out1"; fail "the search did not run 4 side by side"; }
settled_rows >"$tmp/before1"
kill -INT "$g"
status=0
wait "$g" || status=$?
[ "$status" -eq 130 ] || { cat "$tmp/out1"; fail "Ctrl-C: exit $status, want 130"; }
[ -z "$(slurm_active)" ] || fail "Ctrl-C left jobs in the queue: $(slurm_active)"
none_left "Ctrl-C"
[ "$(q "SELECT count(*) FROM attempts WHERE state = 'running'")" -eq 0 ] || fail "Ctrl-C left attempts running in the journal"
kept "$tmp/before1" "Ctrl-C"
n1=$(q "SELECT count(*) FROM attempts WHERE $launched")

# --- 2. resumed, then SIGKILL of gauntlet and its workers while jobs run -------------------
# (a session of its own, so that one kill reaches the parent and every worker at once)
setsid "$GAUNTLET" run "$tmp/m.yaml" --journal "$j" >"$tmp/out2" 2>&1 &
g=$!
echo "$g" >"$tmp/pids-g2"
wait_in_flight "$g" $(($(wc -l <"$tmp/before1") + 1)) ||
        { cat "$tmp/out2"; fail "the resumed run never settled a launch more with two in flight"; }
settled_rows >"$tmp/before2"
kill -KILL -- -"$g"
wait "$g" 2>/dev/null || true
no_gauntlet_left "SIGKILL"
left_behind=$(slurm_active | grep -c '|gauntlet-' || true)
[ "$left_behind" -ge 1 ] || fail "no job outlived the killed run (their sruns should): the case is not tested"
kept "$tmp/before1" "the resumed run"

# --- 3. resumed, then one worker alone killed while its job runs --------------------------
# The other workers decide with its cell in flight: the run must not wait for it forever.
"$GAUNTLET" run "$tmp/m.yaml" --journal "$j" >"$tmp/out3" 2>&1 &
g=$!
echo "$g" >"$tmp/pids-g3"
victim=
for _ in $(seq 600); do
        victim=$(poll_q "SELECT s.owner_pid FROM attempts a JOIN sweeps s ON s.id = a.sweep_id
                WHERE a.state = 'running' AND s.owner_pid != $g ORDER BY a.id DESC LIMIT 1")
        [ -n "$victim" ] && [ "$victim" != 0 ] && grep -q -- "--worker" "/proc/$victim/cmdline" 2>/dev/null &&
                [ "$(slurm_active | grep -c '|gauntlet-' || true)" -ge 1 ] && break
        victim=
        kill -0 "$g" 2>/dev/null || break
        sleep 0.1
done
[ -n "$victim" ] || { cat "$tmp/out3"; fail "the third run never had a worker with a job running"; }
# the jobs the killed run left running were cancelled by this run first, and it said so
# (one of them may have ended by itself meanwhile: a cell whose server was being stopped)
cancelled=$(sed -n 's/^gauntlet: cancelled \([0-9]*\) Slurm jobs\{0,1\} left behind by an earlier run that was killed$/\1/p' "$tmp/out3")
[ -n "$cancelled" ] && [ "$cancelled" -ge 1 ] && [ "$cancelled" -le "$left_behind" ] ||
        { cat "$tmp/out3"; fail "$left_behind jobs were left running by the killed run; the resume did not say it cancelled them"; }
kept "$tmp/before2" "the run after SIGKILL"
settled_rows >"$tmp/before3"
kill -KILL "$victim"
for _ in $(seq 1200); do
        kill -0 "$g" 2>/dev/null || break
        sleep 0.1
done
if kill -0 "$g" 2>/dev/null; then
        cat "$tmp/out3"
        fail "the run still waits 120 s after one of its workers was killed"
fi
status=0
wait "$g" || status=$?
[ "$status" -ne 0 ] || { cat "$tmp/out3"; fail "a run that lost a worker exited 0"; }
grep -q "worker [0-9]* was killed by signal 9" "$tmp/out3" || { cat "$tmp/out3"; fail "the run did not say a worker was killed"; }
[ -z "$(slurm_active)" ] || fail "the killed worker's job is left in the queue: $(slurm_active)"
none_left "a killed worker"
[ "$(q "SELECT count(*) FROM attempts WHERE state = 'running'")" -eq 0 ] || fail "the killed worker's attempt is left running"
kept "$tmp/before3" "the run that lost a worker"

# --- 4. resumed to the end ------------------------------------------------------------------
id4=$(q "SELECT coalesce(max(id), 0) FROM attempts")
"$GAUNTLET" run "$tmp/m.yaml" --journal "$j" >"$tmp/out4" 2>&1 || [ $? -eq 1 ] ||
        { cat "$tmp/out4"; fail "the last resume failed"; }
cat "$tmp/out1" "$tmp/out2" "$tmp/out3" "$tmp/out4" >&2
kept "$tmp/before3" "the last run"
[ -z "$(slurm_active)" ] || fail "jobs left in the queue: $(slurm_active)"
none_left "the run to the end"
[ "$(q "SELECT count(*) FROM attempts WHERE state = 'running'")" -eq 0 ] || fail "an attempt is left running"

# within the budget, every launch counted, the abandoned ones too
n=$(q "SELECT count(*) FROM attempts WHERE $launched")
[ "$n" -le 20 ] || fail "$n launches with a budget of 20"
[ "$n" -gt "$n1" ] || fail "the resumed runs launched nothing ($n launches, $n1 before)"
"$GAUNTLET" report --format json "$j" >"$tmp/r.json"
[ "$(jq -r .search.launches "$tmp/r.json")" = "$n" ] ||
        fail "the report counts $(jq .search.launches "$tmp/r.json") launches, the journal $n"
# a cell that failed was never launched again; one that served, only to be measured again
[ "$(q "SELECT count(*) FROM (SELECT cell_id FROM attempts WHERE state = 'settled' AND verdict != 'skipped'
        AND cell_id IN (SELECT cell_id FROM attempts WHERE state = 'settled' AND verdict NOT IN ('pass', 'skipped'))
        GROUP BY cell_id HAVING count(*) > 1)")" = 0 ] || fail "a cell that failed was launched again"
again=$(q "SELECT count(*) - count(DISTINCT cell_id) FROM attempts WHERE state = 'settled' AND verdict != 'skipped'")
said=$(cat "$tmp/out1" "$tmp/out2" "$tmp/out3" "$tmp/out4" | grep -c 'measured again\]' || true)
[ "$again" -le "$said" ] || fail "$again launches of a cell again, $said said to be measured again"
# every cell accounted for: launched, pruned or inferred, each by one worker
[ "$(jq '.cells | length' "$tmp/r.json")" -eq 24 ] || fail "the report has $(jq '.cells | length' "$tmp/r.json") cells"
# (each run that ends the search prunes the cells not launched, with its reasons as of then)
[ "$(q "SELECT count(*) FROM attempts WHERE cause = 'pruned' AND id > $id4")" -eq \
        "$(q "SELECT count(DISTINCT cell_id) FROM attempts WHERE cause = 'pruned' AND id > $id4")" ] ||
        fail "the last run pruned a cell twice"
best=$(jq -r .best "$tmp/r.json")
[ -n "$best" ] && [ "$best" != null ] || fail "no best"
[ "$(jq -r --arg b "$best" '.cells[] | select(.id == $b) | .verdict' "$tmp/r.json")" = pass ] || fail "the best did not pass"
echo "search-slurm-kill: $n launches ($(q "SELECT count(*) FROM attempts WHERE state = 'abandoned'") interrupted) of 24 cells ($n1 before Ctrl-C, $(wc -l <"$tmp/before2") settled before SIGKILL, $left_behind jobs left behind and $cancelled cancelled, $(wc -l <"$tmp/before3") before a worker was killed), best $(jq -r --arg b "$best" '.cells[] | select(.id == $b) | "\(.axes.moe) \(.axes.delay) \(.axes.gemm)"' "$tmp/r.json")" >&2
echo "search-slurm-kill.sh: all good"

#!/usr/bin/env bash
# tier: slurm (tests/run slurm)
# slurm-limits.sh -- supervision through a real Slurm (tests/slurm-lib.sh): a job killed by
# its time limit, one cancelled by someone else, one that cannot start (a DOWN partition,
# asked for through SLURM_PARTITION, and a partition that does not exist), Ctrl-C cancelling
# the run's job, and a SIGKILLed gauntlet whose job the next run finds by its name and
# cancels. Each verdict carries Slurm's own words. Nothing is left in the queue. Skipped
# (77) when not root or without Debian's Slurm packages.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/slurm-lib.sh"

slurm_start 8

# One cell that loads for LOAD seconds, then passes; SLURM is the slurm: map.
matrix() { # file load slurm-map
        cat >"$1" <<YAML
engine: testbed
args: [--threads, "1", --slow-load, "$2"]
startup_timeout: 10m
request_timeout: 30s
stop_timeout: 5s
launcher: slurm
slurm: $3
checks: default
YAML
}
# "VERDICT CAUSE|EVIDENCE" of the only cell of a journal.
only_cell() {
        "$GAUNTLET" report --format json "$1" | jq -r '.cells[0] | "\(.verdict) \(.cause // "-")|\(.evidence // "")"'
}
# The id of the running job of the sweep writing journal $1 (its log names it), waiting up
# to 30 s for it.
running_job() {
        local i id
        for i in $(seq 300); do
                id=$(sed -n 's/^\[gauntlet: Slurm job \([0-9]*\) runs on .*/\1/p' "${1%.db}"/*/*.log 2>/dev/null | head -n 1)
                [ -n "$id" ] && { echo "$id"; return 0; }
                sleep 0.1
        done
        fail "no job of $1 started running in 30 s: $(slurm_jobs)"
}
job_state() {
        scontrol -o show job "$1" | sed -n 's/.* JobState=\([A-Z_]*\) .*/\1/p'
}

# 1. The time limit (Slurm counts in minutes and looks every 30 s: about 60 to 90 s), in the
# background while the other cases run.
matrix "$tmp/limit.yaml" 600 "{time: 1m}"
"$GAUNTLET" run "$tmp/limit.yaml" --journal "$tmp/limit.db" >"$tmp/limit.out" 2>&1 &
limit_pid=$!
echo "$limit_pid" >"$tmp/pids-limit"

# 1b. A server that never gets ready: the startup timeout counts from the moment its job
# runs, and the verdict and evidence are those of the same cell run here.
cat >"$tmp/hang.yaml" <<YAML
engine: testbed
args: [--threads, "1", --hang-at-load]
startup_timeout: 3s
stop_timeout: 5s
launcher: slurm
YAML
"$GAUNTLET" run "$tmp/hang.yaml" --launcher local --journal "$tmp/hang-local.db" >"$tmp/hang-local.out" 2>&1 &&
        fail "a server that hangs passed"
"$GAUNTLET" run "$tmp/hang.yaml" --journal "$tmp/hang.db" >"$tmp/hang.out" 2>&1 && fail "a server that hangs passed"
want=$(only_cell "$tmp/hang-local.db")
got=$(only_cell "$tmp/hang.db")
case $want in "timeout startup|not ready after 3s; last log line: "*) ;; *) fail "hang, here: got '$want'" ;; esac
[ "$got" = "$want" ] || { cat "$tmp/hang.out"; fail "hang through Slurm: got '$got', here '$want'"; }

# 2. A job that cannot start: the partition is DOWN. It is asked for through SLURM_PARTITION,
# the variable srun reads: gauntlet leaves Slurm's variables to Slurm.
matrix "$tmp/down.yaml" 0 "{queue_timeout: 3s}"
SLURM_PARTITION=closed "$GAUNTLET" run "$tmp/down.yaml" --journal "$tmp/down.db" >"$tmp/down.out" 2>&1 &&
        fail "a cell that never started passed"
got=$(only_cell "$tmp/down.db")
case $got in
"timeout queue|Slurm job "*" did not start within slurm.queue_timeout (3s): still PENDING (reason PartitionDown)") ;;
*) cat "$tmp/down.out"; fail "DOWN partition: got '$got'" ;;
esac
down_job=$(sed -n 's/.*Slurm job \([0-9]*\) did not start.*/\1/p' <<<"$got")
[ "$(job_state "$down_job")" = CANCELLED ] || fail "the pending job $down_job was left $(job_state "$down_job")"

# 3. ... and a partition that does not exist: srun is refused, Slurm says why.
matrix "$tmp/nosuch.yaml" 0 "{partition: nosuch}"
"$GAUNTLET" run "$tmp/nosuch.yaml" --journal "$tmp/nosuch.db" >"$tmp/nosuch.out" 2>&1 && fail "a refused job passed"
got=$(only_cell "$tmp/nosuch.db")
case $got in
"error slurm|srun got no job: srun: error: invalid partition specified: nosuch"*) ;;
*) cat "$tmp/nosuch.out"; fail "no such partition: got '$got'" ;;
esac

# 4. Cancelled by someone else while it loads: its own verdict, Slurm's state and line.
matrix "$tmp/cancel.yaml" 30 "{}"
"$GAUNTLET" run "$tmp/cancel.yaml" --journal "$tmp/cancel.db" >"$tmp/cancel.out" 2>&1 &
gpid=$!
echo "$gpid" >"$tmp/pids-cancel"
job=$(running_job "$tmp/cancel.db")
scancel "$job"
set +e
wait "$gpid"
status=$?
set -e
[ "$status" -eq 1 ] || { cat "$tmp/cancel.out"; fail "cancelled job: exit $status, want 1"; }
got=$(only_cell "$tmp/cancel.db")
case $got in
"error cancelled|Slurm job $job CANCELLED: it was cancelled outside gauntlet, after "*" on gauntlet; slurmstepd"*"*** STEP $job.0 ON gauntlet CANCELLED AT "*) ;;
*) cat "$tmp/cancel.out"; fail "cancelled job: got '$got'" ;;
esac

# 5. Ctrl-C while the server loads: the run's job is cancelled, exit 130.
matrix "$tmp/int.yaml" 30 "{}"
"$GAUNTLET" run "$tmp/int.yaml" --journal "$tmp/int.db" >"$tmp/int.out" 2>&1 &
gpid=$!
echo "$gpid" >"$tmp/pids-int"
job=$(running_job "$tmp/int.db")
kill -INT "$gpid"
set +e
wait "$gpid"
status=$?
set -e
[ "$status" -eq 130 ] || { cat "$tmp/int.out"; fail "SIGINT: exit $status, want 130"; }
# ended (the testbed exits 1 on SIGTERM while it loads: FAILED), not queued nor running
state=$(job_state "$job")
case $state in COMPLETED | CANCELLED | FAILED) ;; *) fail "SIGINT left job $job $state" ;; esac
grep -q "^\[gauntlet: Slurm job $job ended " "$tmp"/int/*/*.log || fail "the log does not say how job $job ended"

# 6. gauntlet SIGKILLed while its job runs: srun, in a session of its own, and the job live
# on; the next run finds the job by its name, cancels it, and runs the cell again.
matrix "$tmp/kill.yaml" 5 "{}"
"$GAUNTLET" run "$tmp/kill.yaml" --journal "$tmp/kill.db" >"$tmp/kill.out" 2>&1 &
gpid=$!
echo "$gpid" >"$tmp/pids-kill"
job=$(running_job "$tmp/kill.db")
kill -KILL "$gpid"
wait "$gpid" 2>/dev/null || true
sleep 1
[ "$(job_state "$job")" = RUNNING ] || fail "after SIGKILL the job was $(job_state "$job"), not still RUNNING"
"$GAUNTLET" run "$tmp/kill.yaml" --journal "$tmp/kill.db" >"$tmp/kill2.out" 2>&1 || { cat "$tmp/kill2.out"; fail "the run after SIGKILL failed"; }
grep -q "cancelled 1 Slurm job left behind by an earlier run that was killed" "$tmp/kill2.out" ||
        { cat "$tmp/kill2.out"; fail "the next run did not say it cancelled the job"; }
[ "$(job_state "$job")" = CANCELLED ] || fail "the orphaned job $job is $(job_state "$job"), not CANCELLED"
[ "$(only_cell "$tmp/kill.db")" = "pass -|" ] || fail "the cell did not pass on the next run: $(only_cell "$tmp/kill.db")"

# 1, at last: Slurm's time limit ended the server.
set +e
wait "$limit_pid"
status=$?
set -e
[ "$status" -eq 1 ] || { cat "$tmp/limit.out"; fail "time limit: exit $status, want 1"; }
got=$(only_cell "$tmp/limit.db")
case $got in
"timeout time-limit|Slurm job "*" TIMEOUT (reason TimeLimit): its time limit ran out, after 00:01:"*" of 00:01:00 on gauntlet; slurmstepd"*"DUE TO TIME LIMIT ***") ;;
*) cat "$tmp/limit.out"; fail "time limit: got '$got'" ;;
esac

[ -z "$(slurm_active)" ] || fail "jobs left in the queue: $(slurm_active)"
expect_none_alive "gauntlet processes left"
echo "slurm-limits.sh: all good"

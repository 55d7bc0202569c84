#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# parallel.sh -- on a (simulated) host with 4 GPUs and `gpus_per_cell: 1`, cells run side
# by side, each server seeing its own GPU through CUDA_VISIBLE_DEVICES; a second run
# resumes; SIGINT stops every worker and every server; a worker killed alone has its server
# stopped by the parent.
. "$SRCDIR/tests/lib.sh"

fake_gpus "$tmp/gpus.json" 4
export GAUNTLET_FAKE_GPUS="$tmp/gpus.json"
# The server records which GPUs it was given and when it started, then becomes the fixture.
cat >"$tmp/server.sh" <<EOF2
#!/bin/sh
echo "\$(date +%s.%N) \$CUDA_VISIBLE_DEVICES" >>"$tmp/visible"
exec "$FIXTURE" "\$@"
EOF2
chmod +x "$tmp/server.sh"
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$tmp/server.sh, --port, "{port}", --pid-file, "$tmp/pids-{port}", --load-time, "3"]
gpus_per_cell: 1
startup_timeout: 30s
stop_timeout: 2s
memory_timeout: 2s
axes:
  answer:
    values:
      - {name: right}
      - {name: wrong, args: [--answer-for, "17 * 19=324"]}
      - {name: bangs, args: [--answer, "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"]}
      - {name: right-too, env: {UNUSED: "1"}}
YAML
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/out" "$tmp/err"; fail "run failed"; }
cat "$tmp/out" "$tmp/err" >&2
grep -q "4 cells side by side, 1 GPU each" "$tmp/err" || fail "the cells did not run side by side"
# every cell saw exactly one GPU, each a different one
[ "$(awk '{print $2}' "$tmp/visible" | sort | tr '\n' ' ')" = "GPU-a GPU-b GPU-c GPU-d " ] ||
        fail "CUDA_VISIBLE_DEVICES per cell: $(awk '{print $2}' "$tmp/visible" | tr '\n' ' ')"
# side by side: all four started within the first one's 3 s load
awk 'NR == 1 { lo = hi = $1 } { if ($1 < lo) lo = $1; if ($1 > hi) hi = $1 } END { exit !(hi - lo < 3) }' "$tmp/visible" ||
        fail "the cells did not overlap: $(cat "$tmp/visible")"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json"
for c in "right pass -" "right-too pass -" "wrong wrong math" "bangs garbage repeat"; do
        expect_verdict "$tmp/r.json" answer "${c%% *}" "${c#* }"
done
grep -q "^4 cells: 2 pass, 1 garbage, 1 wrong" "$tmp/out" || fail "no summary from the parent"
expect_none_alive "processes left"

# resume: nothing runs again
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out2" 2>&1 || { cat "$tmp/out2"; fail "the resume run failed"; }
[ "$(grep -c '(journal)' "$tmp/out2")" -eq 4 ] || { cat "$tmp/out2"; fail "resume ran settled cells again"; }

# SIGINT while the servers load: every worker and server stops, exit 130
rm -f "$tmp"/pids-* "$tmp/visible"
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j2.db" >"$tmp/out3" 2>&1 &
gpid=$!
for _ in $(seq 200); do [ "$(cat "$tmp"/pids-* 2>/dev/null | wc -l)" -ge 4 ] && break; sleep 0.05; done
kill -INT "$gpid"
set +e
wait "$gpid"
status=$?
set -e
[ "$status" -eq 130 ] || { cat "$tmp/out3"; fail "SIGINT: exit $status, want 130"; }
expect_none_alive "SIGINT left processes"

# SIGKILL of the parent: its workers stop their servers and end; the next run resumes.
rm -f "$tmp"/pids-*
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j3.db" >"$tmp/out4" 2>&1 &
gpid=$!
for _ in $(seq 200); do [ "$(cat "$tmp"/pids-* 2>/dev/null | wc -l)" -ge 4 ] && break; sleep 0.05; done
kill -KILL "$gpid"
wait "$gpid" 2>/dev/null || true
expect_none_alive "the workers did not stop their servers when the parent died" 10
for _ in $(seq 100); do pgrep -f -- "--journal $tmp/j3.db" >/dev/null || break; sleep 0.1; done
pgrep -f -- "--journal $tmp/j3.db" >/dev/null && fail "a worker outlived its parent by 10 s"
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j3.db" >"$tmp/out5" 2>&1 || { cat "$tmp/out5"; fail "the run after SIGKILL failed"; }
grep -q "^4 cells: 2 pass, 1 garbage, 1 wrong" "$tmp/out5" || { cat "$tmp/out5"; fail "the run after SIGKILL did not finish the sweep"; }
# SIGKILL of one worker alone (the OOM killer) while its server loads: the parent says so,
# stops the server it left and abandons its attempt, the others finish; the next run
# runs that cell.
rm -f "$tmp"/pids-*
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j5.db" >"$tmp/out7" 2>&1 &
gpid=$!
for _ in $(seq 200); do [ "$(cat "$tmp"/pids-* 2>/dev/null | wc -l)" -ge 4 ] && break; sleep 0.05; done
victim=$(pgrep -f -- "--journal $tmp/j5.db --worker 1/4/" | head -1)
[ -n "$victim" ] || { cat "$tmp/out7"; fail "no worker 1 to kill"; }
kill -KILL "$victim"
status=0
wait "$gpid" || status=$?
[ "$status" -ne 0 ] || { cat "$tmp/out7"; fail "a run that lost a worker exited 0"; }
grep -q "worker 1 was killed by signal 9; stopping what it left running" "$tmp/out7" ||
        { cat "$tmp/out7"; fail "the parent did not say a worker was killed"; }
expect_none_alive "the killed worker's server was left running"
[ "$(sqlite3 "$tmp/j5.db" "SELECT count(*) FROM attempts WHERE state = 'running'")" -eq 0 ] ||
        fail "the killed worker's attempt was left running"
[ "$(sqlite3 "$tmp/j5.db" "SELECT count(*) FROM attempts WHERE state = 'abandoned'")" -eq 1 ] ||
        fail "the killed worker's attempt was not abandoned"
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j5.db" >"$tmp/out8" 2>&1 || { cat "$tmp/out8"; fail "the run after a killed worker failed"; }
grep -q "^4 cells: 2 pass, 1 garbage, 1 wrong" "$tmp/out8" || { cat "$tmp/out8"; fail "the run after a killed worker did not finish the sweep"; }
[ "$(grep -c '(journal)' "$tmp/out8")" -eq 3 ] || { cat "$tmp/out8"; fail "the run after a killed worker ran settled cells again"; }
# A worker whose parent is already gone (its parent is not the pid it was given) ends at
# once with 130 and starts nothing.
rm -f "$tmp"/pids-*
set +e
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j4.db" --worker 0/4/1 >"$tmp/out6" 2>&1
status=$?
set -e
[ "$status" -eq 130 ] || { cat "$tmp/out6"; fail "orphaned worker: exit $status, want 130"; }
[ -z "$(ls "$tmp"/pids-* 2>/dev/null)" ] || fail "an orphaned worker started a server"
echo "parallel.sh: all good"

#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# run.sh -- `gauntlet run` against the scripted fixture server: every verdict class with
# its evidence, nothing left running, resume from the journal, SIGINT and SIGKILL of
# gauntlet mid-sweep.
. "$SRCDIR/tests/lib.sh"

cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --host, "{host}", --pid-file, "$tmp/pids-{port}"]
startup_timeout: 4s
request_timeout: 2s
stop_timeout: 1s
axes:
  behaviour:
    values:
      - {name: good}
      - {name: stubborn, args: [--ignore-sigterm, --helpers, "2", --helper-setsid]}
      - {name: garbage, args: [--answer, "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"]}
      - {name: wrong, args: [--answer-for, "17 * 19=324"]}
      - {name: arch, args: [--die-at-load, --log, "RuntimeError: CUDA error: no kernel image is available for execution on the device"]}
      - {name: killed, args: [--load-time, "0.2", --die-at-load, --die-signal, KILL]}
      - {name: exit0, args: [--child-crash-exit-zero, --log, "RuntimeError: CUDA error: an illegal memory access was encountered"]}
      - {name: never, args: [--never-ready]}
      - {name: never-err, args: [--never-ready, --log, "INFO: loading", --log, "ERROR: model store unreachable", --log, "INFO: retrying"]}
      - {name: hang, args: [--hang-requests]}
      - {name: dies, args: [--die-after-requests, "1", --log, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"]}
      - {name: config, args: [--die-at-load, --exit-code, "2", --log, "launch_server.py: error: argument --moe-runner-backend: invalid choice: 'magic' (choose from 'auto', 'triton')"]}
      - {name: left-out, env: {UNUSED: "1"}}
exclude: [{behaviour: left-out}]
YAML

set +e
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out1" 2>"$tmp/err1"
status=$?
set -e
cat "$tmp/out1"
cat "$tmp/err1" >&2
[ "$status" -eq 0 ] || fail "exit status $status, want 0 (a cell passed)"
expect_none_alive "processes left behind"

"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json"
want() { # behaviour verdict cause evidence-fragment
        expect_verdict "$tmp/r.json" behaviour "$1" "$2 $3"
        if [ -n "${4:-}" ]; then
                jq -r --arg b "$1" '.cells[] | select(.axes.behaviour == $b) | .evidence // ""' "$tmp/r.json" |
                        grep -qF -- "$4" || fail "$1: evidence lacks '$4'"
        fi
}
want good pass -
want stubborn pass -
want garbage garbage repeat '!!!!!!!!'
want wrong wrong math 324
want arch crash arch "no kernel image is available"
want killed crash signal "SIGKILL"
want exit0 crash cuda "illegal memory access"
want never timeout startup "not ready after 4s"
want never-err timeout startup "not ready after 4s; first error line: ERROR: model store unreachable"
want hang timeout request
want dies crash oom "CUDA out of memory"
want config crash config "invalid choice"
want left-out skipped excluded
[ "$(jq -r .best "$tmp/r.json")" != null ] || fail "no best cell"
jq -e '.cells[] | select(.verdict == "pass") | .checks | length >= 4' "$tmp/r.json" >/dev/null ||
        fail "passing cells lack their check results"

# Resume: everything is settled, nothing runs again.
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out2"
[ "$(grep -c "(journal)" "$tmp/out2")" -eq 12 ] && grep -q "left-out *skipped/excluded" "$tmp/out2" || { cat "$tmp/out2"; fail "resume did not skip settled cells"; }

# SIGINT during start-up: the server is stopped, the attempt is not settled, exit 130.
cat >"$tmp/slow.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-slow-{port}", --load-time, "2", --helpers, "1", --helper-setsid]
startup_timeout: 30s
stop_timeout: 1s
YAML
"$GAUNTLET" run "$tmp/slow.yaml" --journal "$tmp/slow.db" >"$tmp/out3" 2>&1 &
gpid=$!
for _ in $(seq 100); do ls "$tmp"/pids-slow-* >/dev/null 2>&1 && [ "$(cat "$tmp"/pids-slow-* | wc -l)" -ge 2 ] && break; sleep 0.05; done
kill -INT "$gpid"
set +e
wait "$gpid"
status=$?
set -e
[ "$status" -eq 130 ] || { cat "$tmp/out3"; fail "SIGINT: exit status $status, want 130"; }
expect_none_alive "SIGINT left processes"
rm -f "$tmp"/pids-slow-*

# SIGKILL of gauntlet: its server survives it; the next run stops it and runs the cell again.
"$GAUNTLET" run "$tmp/slow.yaml" --journal "$tmp/slow.db" >"$tmp/out4" 2>&1 &
gpid=$!
for _ in $(seq 100); do ls "$tmp"/pids-slow-* >/dev/null 2>&1 && [ "$(cat "$tmp"/pids-slow-* | wc -l)" -ge 2 ] && break; sleep 0.05; done
kill -KILL "$gpid"
wait "$gpid" 2>/dev/null || true
leftover=$(alive_pids)
[ -n "$leftover" ] || fail "expected the killed run's server to outlive it"
"$GAUNTLET" run "$tmp/slow.yaml" --journal "$tmp/slow.db" >"$tmp/out5" 2>"$tmp/err5" ||
        { cat "$tmp/out5" "$tmp/err5"; fail "the run after SIGKILL failed"; }
grep -q "left behind by an earlier run" "$tmp/err5" || { cat "$tmp/err5"; fail "no notice of the cleanup"; }
for p in $leftover; do
        if pid_running "$p"; then fail "pid $p survived the cleanup"; fi
done
grep -q "pass" "$tmp/out5" || { cat "$tmp/out5"; fail "the interrupted cell did not run again"; }
expect_none_alive "processes left after the last run"
# usage errors name what is wrong with the option
for a in "--journal|option '--journal' needs a value" "--bogus|unknown option '--bogus'"; do
        set +e
        "$GAUNTLET" run "$tmp/m.yaml" "${a%%|*}" >/dev/null 2>"$tmp/err"
        rc=$?
        set -e
        [ "$rc" -eq 2 ] && grep -q "^gauntlet: ${a#*|}" "$tmp/err" || fail "run ${a%%|*}: exit $rc, $(cat "$tmp/err")"
done
echo "run.sh: all good"

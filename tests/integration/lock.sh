#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# lock.sh -- one run per journal: a second run on a journal that a run holds stops at once
# in one line with the holder's pid (exit 2, no server started, nothing settled twice);
# report works meanwhile; with --wait the second run waits and then finds every cell settled.
. "$SRCDIR/tests/lib.sh"
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --host, "{host}", --pid-file, "$tmp/pids-{port}", --load-time, "2"]
startup_timeout: 20s
stop_timeout: 1s
axes:
  n:
    values: [{name: a}, {name: b, env: {N: b}}]
YAML
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/first.out" 2>&1 &
first=$!
for _ in $(seq 200); do ls "$tmp"/pids-* >/dev/null 2>&1 && break; sleep 0.05; done
ls "$tmp"/pids-* >/dev/null 2>&1 || fail "the first run started no server"
set +e
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/second.out" 2>"$tmp/second.err"
rc=$?
set -e
[ "$rc" -eq 2 ] || fail "second run: exit $rc, want 2 ($(cat "$tmp/second.err"))"
grep -qx "gauntlet: journal '$tmp/j.db' is in use by another run (pid $first)" "$tmp/second.err" ||
        fail "second run said: $(cat "$tmp/second.err")"
[ "$(ls "$tmp"/pids-* | wc -l)" -eq 1 ] || fail "the refused run started a server"
"$GAUNTLET" report "$tmp/j.db" >"$tmp/report.out" 2>&1 || { cat "$tmp/report.out"; fail "report failed while a run holds the journal"; }
# --wait: waits for the first run, then has nothing left to do
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" --wait >"$tmp/third.out" 2>"$tmp/third.err" ||
        { cat "$tmp/third.out" "$tmp/third.err"; fail "the waiting run failed"; }
grep -q "is in use by another run (pid $first); waiting for it" "$tmp/third.err" || fail "no word of the wait: $(cat "$tmp/third.err")"
wait "$first" || fail "the first run failed: $(cat "$tmp/first.out")"
[ "$(grep -c "(journal)" "$tmp/third.out")" -eq 2 ] || { cat "$tmp/third.out"; fail "the waiting run ran cells again"; }
[ "$(sqlite3 "$tmp/j.db" "SELECT count(*) FROM attempts")" -eq 2 ] || fail "cells settled more than once"
expect_none_alive "processes left"
echo "lock.sh: all good"

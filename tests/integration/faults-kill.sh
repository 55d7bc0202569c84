#!/usr/bin/env bash
# tier: faults (tests/run faults)
# faults-kill.sh -- gauntlet SIGKILLed at random points of a sweep, again and again: the
# journal stays sound, no settled attempt is ever lost, only interrupted attempts run
# again, and the next run ends what the killed one left running (docs/faults.md).
set -euo pipefail
# shellcheck source=tests/faults/lib.sh
. "$SRCDIR/tests/faults/lib.sh"
need_shim

KILLS=${FAULTS_KILLS:-15}
MAX_DELAY_MS=2000
started=$SECONDS

# Six cells that cover every phase: slow loads, stubborn helpers in sessions of their
# own, a crash at load, and a bench for every passing cell (slow tokens in one).
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-{port}"]
startup_timeout: 15s
request_timeout: 10s
stop_timeout: 300ms
bench: {concurrency: [1, 4], output_tokens: 16, requests: 8}
axes:
  behaviour:
    values:
      - {name: slow-tokens, args: [--token-delay-ms, "8"]}
      - {name: good, args: [--load-time, "0.5"]}
      - {name: slow, args: [--load-time, "1.2"]}
      - {name: stubborn, args: [--load-time, "0.5", --ignore-sigterm, --helpers, "2", --helper-setsid, --token-delay-ms, "3"]}
      - {name: slow-helpers, args: [--load-time, "0.8", --helpers, "1", --helper-setsid]}
      - {name: crash, args: [--load-time, "0.5", --die-at-load, --log, "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"]}
YAML
j="$tmp/j.db"
: >"$tmp/settled.prev"

kills=0             # runs that were really killed (not finished before the kill)
survived=0          # kills after which a server (or helper) was still running
for k in $(seq "$KILLS"); do
        ms=$((RANDOM % MAX_DELAY_MS))
        start_gauntlet "k$k" run "$tmp/m.yaml" --journal "$j"
        sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
        if kill -KILL "$gpid" 2>/dev/null; then killed=1; else killed=0; fi
        wait_gauntlet
        finished=0
        if [ "$killed" = 1 ] && [ "$status" -eq 137 ]; then
                kills=$((kills + 1))
        elif [ "$status" -eq 0 ]; then
                finished=1 # the kills let it get to the end: check, then stop killing
        else
                cat "$tmp/out.k$k" "$tmp/err.k$k" >&2
                fail "run $k ended by itself with status $status"
        fi
        collect_pids
        [ -e "$j" ] || continue # killed before the journal was created
        journal_ok "$j"
        # killed after SQLite made the file, before the schema's transaction committed: an
        # empty journal, which is sound as long as nothing had settled in it before
        if [ "$(sqlite3 "$j" "SELECT count(*) FROM sqlite_master WHERE name = 'attempts'")" = 0 ]; then
                [ ! -s "$tmp/settled.prev" ] || fail "kill $k (after ${ms} ms): the journal lost its tables"
                continue
        fi

        # Nothing settled is ever lost, and nothing settles twice.
        settled_attempts "$j" >"$tmp/settled.now"
        lost=$(comm -23 "$tmp/settled.prev" "$tmp/settled.now")
        [ -z "$lost" ] || fail "kill $k (after ${ms} ms) lost settled attempts: $lost"
        twice=$(sqlite3 "$j" "SELECT cell_id FROM attempts WHERE state = 'settled' GROUP BY cell_id HAVING count(*) > 1")
        [ -z "$twice" ] || fail "cells settled twice: $twice"
        cp "$tmp/settled.now" "$tmp/settled.prev"

        # What a kill leaves running is the attempt in flight, and the journal knows it:
        # every survivor carries the token of an attempt still marked running.
        left=$(alive_fixtures)
        if [ -n "$left" ]; then
                survived=$((survived + 1))
                tokens=$(sqlite3 "$j" "SELECT p.token FROM processes p JOIN attempts a ON a.id = p.attempt_id WHERE a.state = 'running'")
                for p in $left; do
                        t=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | sed -n 's/^GAUNTLET_ATTEMPT=//p')
                        [ -z "$t" ] && is_fixture "$p" && fail "survivor $p has no attempt token"
                        [ -z "$t" ] || grep -qxF -- "$t" <<<"$tokens" || {
                                sqlite3 "$j" "SELECT a.id, a.state, a.abandon_reason, a.verdict, p.pid FROM attempts a JOIN processes p ON p.attempt_id = a.id WHERE p.token = '$t'" >&2
                                ps -o pid,ppid,stat,args -p "$p" >&2 || true
                                cat "$tmp/err.k$k" >&2
                                echo "tokens of running attempts: [$tokens]" >&2
                                fail "survivor $p (token $t) belongs to no running attempt; the next run could not find it"
                        }
                done
        fi
        [ "$finished" = 0 ] || break
done
echo "kills: $kills of $KILLS runs; survivors after $survived of them; $(wc -l <"$tmp/settled.prev") attempts settled so far; $((SECONDS - started)) s"
[ "$kills" -ge $((KILLS / 3)) ] || fail "only $kills of $KILLS runs were killed: the sweep is too fast for this test"

# The narrowest window: SIGKILL right after the spawn, before the pid is journaled (the
# shim kills gauntlet as posix_spawnp returns). The attempt's token is already in the
# journal, so the next run still finds the server and its helper.
cat >"$tmp/window.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-window-{port}", --load-time, "60", --helpers, "1", --helper-setsid]
startup_timeout: 90s
stop_timeout: 1s
YAML
GAUNTLET_FAULT_KILL_AFTER_SPAWN=gauntlet LD_PRELOAD="$ENOSPC_SO" start_gauntlet window run "$tmp/window.yaml" --journal "$tmp/w.db"
wait_gauntlet
[ "$status" -eq 137 ] || fail "the spawn-kill shim did not fire (status $status)"
wait_pid_lines 2 10 "$tmp/pids-window-*" || fail "the server of the killed run did not start"
window_pids=$(cat "$tmp"/pids-window-*)
collect_pids
for p in $window_pids; do is_fixture "$p" || fail "pid $p of the killed run is already gone"; done
t0=$SECONDS
start_gauntlet window2 run "$tmp/window.yaml" --journal "$tmp/w.db"
sleep 0.5
kill -TERM "$gpid" # lands in the cleanup at its start: it finishes, then the run stops
wait_gauntlet
[ "$status" -eq 130 ] || fail "SIGTERM during the orphan cleanup: status $status, want 130"
# The helper ignores SIGTERM: the cleanup gives it the matrix's stop_timeout (1 s), not
# a fixed grace of its own, before SIGKILL.
[ $((SECONDS - t0)) -le 6 ] || fail "the cleanup of a stubborn orphan took $((SECONDS - t0)) s with stop_timeout 1s"
grep -q "stopped 2 processes left behind" "$tmp/err.window2" ||
        { cat "$tmp/err.window2" >&2; fail "the run after a kill at spawn did not stop what it left"; }
left=$(alive_fixtures)
for p in $window_pids; do echo "$left" | grep -x "$p" >/dev/null && fail "pid $p (killed at spawn) survived the next run"; done
rm -f "$tmp"/pids-window-*

# Now run to the end: it must finish what was left, stop every survivor first, and
# repeat exactly the attempts the kills interrupted.
survivors_before=$(alive_fixtures)
start_gauntlet final run "$tmp/m.yaml" --journal "$j"
wait_gauntlet
[ "$status" -eq 0 ] || { cat "$tmp/out.final" "$tmp/err.final" >&2; fail "final run: status $status"; }
if [ -n "$survivors_before" ]; then
        grep -q "left behind by an earlier run" "$tmp/err.final" ||
                { cat "$tmp/err.final" >&2; fail "survivors of the last kill were not announced"; }
fi
expect_no_fixture 5 "after the final run"
journal_ok "$j"
settled_attempts "$j" >"$tmp/settled.now"
lost=$(comm -23 "$tmp/settled.prev" "$tmp/settled.now")
[ -z "$lost" ] || fail "the final run lost settled attempts: $lost"

q() { sqlite3 "$j" "$1"; }
[ "$(q "SELECT count(*) FROM attempts WHERE state = 'running'")" = 0 ] || fail "attempts still running"
[ "$(q "SELECT count(DISTINCT cell_id) FROM attempts WHERE state = 'settled'")" = 6 ] || fail "not every cell settled"
[ "$(q "SELECT count(*) FROM attempts WHERE state = 'settled'")" = 6 ] || fail "a cell settled more than once"
abandoned=$(q "SELECT count(*) FROM attempts WHERE state = 'abandoned'")
[ "$abandoned" -le "$kills" ] || fail "$abandoned attempts abandoned for $kills kills: more than the one in flight each time"
# Repeated means interrupted: no attempt of a cell starts after the cell settled.
after=$(q "SELECT a.id FROM attempts a JOIN attempts s ON s.cell_id = a.cell_id AND s.state = 'settled' WHERE a.id > s.id")
[ -z "$after" ] || fail "settled cells ran again (attempts $after)"
# And every abandoned attempt's cell did run again.
unrepeated=$(q "SELECT a.id FROM attempts a WHERE a.state = 'abandoned' AND NOT EXISTS (SELECT 1 FROM attempts s WHERE s.cell_id = a.cell_id AND s.state = 'settled' AND s.id > a.id)")
[ -z "$unrepeated" ] || fail "interrupted attempts never repeated: $unrepeated"

# The report is complete: every cell with its verdict, benches for the passing ones.
"$GAUNTLET" report --format json "$j" >"$tmp/r.json"
want() { # behaviour verdict cause
        local got
        got=$(jq -r --arg b "$1" '.cells[] | select(.axes.behaviour == $b) | "\(.verdict) \(.cause // "-")"' "$tmp/r.json")
        [ "$got" = "$2 $3" ] || fail "$1: got '$got', want '$2 $3'"
}
for b in good slow stubborn slow-helpers slow-tokens; do want "$b" pass -; done
want crash crash oom
[ "$(jq '[.cells[] | select(.verdict == "pass") | select((.bench | length) == 2)] | length' "$tmp/r.json")" = 5 ] ||
        fail "passing cells lack their two bench levels"
[ "$(jq -r .best "$tmp/r.json")" != null ] || fail "no best cell"
echo "faults-kill.sh: $kills kills, $abandoned attempts repeated, $((SECONDS - started)) s; all good"

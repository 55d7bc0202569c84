#!/usr/bin/env bash
# port-owner.sh -- the server answering is the one launched (issue #24 item 1): a server
# that takes 3 s before it listens on a fixed port, and another process that binds that
# port during those 3 s. The impostor answers the readiness probe and the checks would
# pass on its word; instead the cell is crash/port, the evidence names the impostor's pid
# and command, and nothing is emitted. An honest server on the same fixed port passes.
. "$SRCDIR/tests/lib.sh"
command -v python3 >/dev/null || fail "python3 is needed"
command -v jq >/dev/null || fail "jq is needed"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-server", --load-time, "3", --no-listen-until-ready]
port: $port
startup_timeout: 20s
stop_timeout: 1s
YAML

# The impostor: started by this script (not a process of the cell), without the attempt's
# token, once the launched server has written its pid; it listens at once and answers
# like a healthy server with another model's id.
(
        for _ in $(seq 200); do [ -s "$tmp/pids-server" ] && break; sleep 0.02; done
        exec env -u GAUNTLET_ATTEMPT setsid "$FIXTURE" --port "$port" --model impostor-model \
                --pid-file "$tmp/pids-impostor"
) &
t0=$(date +%s%N)
set +e
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>"$tmp/err"
status=$?
set -e
t1=$(date +%s%N)
cat "$tmp/out" "$tmp/err" >&2
[ -s "$tmp/pids-impostor" ] || fail "the impostor never started"
impostor=$(head -1 "$tmp/pids-impostor")
[ "$status" -eq 1 ] || fail "exit $status, want 1 (no cell passed)"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json"
got=$(jq -r '.cells[0] | "\(.verdict)/\(.cause)"' "$tmp/r.json")
[ "$got" = crash/port ] || fail "verdict $got, want crash/port"
evidence=$(jq -r '.cells[0].evidence' "$tmp/r.json")
case "$evidence" in
*"port $port is answered by pid $impostor (gauntlet-fixtur)"*"--model impostor-model"*"not by a process of the server"*) ;;
*) fail "the evidence does not name the impostor (pid $impostor): $evidence" ;;
esac
# decided before the first check: no check ran against the impostor
[ "$(jq '.cells[0].checks | length' "$tmp/r.json")" -eq 0 ] || fail "checks ran against the impostor"
grep -q "impostor-model" "$tmp/out" && ! grep -q "answered by" "$tmp/out" && fail "the impostor's model id was shown as the server's"
# not a pass, so nothing to emit
if "$GAUNTLET" emit systemd "$tmp/j.db" >"$tmp/unit" 2>"$tmp/emit-err"; then
        fail "a unit was emitted for a server that never answered: $(cat "$tmp/unit")"
fi
# the note is in the cell's log too
log=$(jq -r '.cells[0].log' "$tmp/r.json")
grep -q "\[gauntlet: port $port is answered by pid $impostor" "$log" || fail "no note in the log $log"
echo "impostor: crash/port in $(( (t1 - t0) / 1000000 )) ms" >&2
kill "$impostor" 2>/dev/null || true
expect_none_alive "processes left" 5

# The same matrix, the port free: the launched server is the one that listens, and passes.
rm -f "$tmp/pids-server"
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/honest.db" >"$tmp/out2" 2>"$tmp/err2" ||
        { cat "$tmp/out2" "$tmp/err2"; fail "the honest server did not pass"; }
grep -q "cannot tell which process listens" "$tmp/err2" && fail "the listener could not be checked: $(cat "$tmp/err2")"
"$GAUNTLET" report --format json "$tmp/honest.db" >"$tmp/r2.json"
[ "$(jq -r '.cells[0].verdict' "$tmp/r2.json")" = pass ] || fail "the honest server: $(jq -c '.cells[0]' "$tmp/r2.json")"
expect_none_alive "processes left after the honest server" 5
echo "port-owner.sh: all good"

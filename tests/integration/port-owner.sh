#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# port-owner.sh -- the server answering is the one launched (issue #24 item 1): a server
# that takes 3 s before it listens on a fixed port, and another process that binds that
# port during those 3 s. The impostor answers the readiness probe and the checks would
# pass on its word; instead the cell is crash/port, the evidence names the impostor's pid
# and command, and nothing is emitted. An honest server on the same fixed port passes.
. "$SRCDIR/tests/lib.sh"
command -v python3 >/dev/null || fail "python3 is needed"
command -v jq >/dev/null || fail "jq is needed"
command -v sqlite3 >/dev/null || fail "sqlite3 is needed"

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

# A port gauntlet picked, taken by another process while the server loads: not the
# configuration's fault, so the attempt is abandoned with the impostor named and the cell
# launched again on another port, where it passes. The impostor is started by a service of
# this script (not a process of the cell) that reads ports from a FIFO.
mkfifo "$tmp/impostor.fifo"
(
        exec 3<>"$tmp/impostor.fifo"
        while read -r p <&3; do
                env -u GAUNTLET_ATTEMPT setsid "$FIXTURE" --port "$p" --model impostor-model \
                        --pid-file "$tmp/pids-impostor-$p" >/dev/null 2>&1 &
        done
) &
echo $! >"$tmp/pids-impostord"
cat >"$tmp/server.sh" <<EOF2
#!/bin/sh
# the first launch has an impostor take its port, then loads for a second before it binds
if [ ! -e "$tmp/first-done" ]; then
        touch "$tmp/first-done"
        echo "\$2" >"$tmp/impostor.fifo"
        i=0
        until curl -sf "http://127.0.0.1:\$2/health" >/dev/null 2>&1; do
                [ \$i -lt 100 ] || exit 4
                sleep 0.05
                i=\$((i + 1))
        done
fi
exec "$FIXTURE" "\$@" --load-time 1 --no-listen-until-ready
EOF2
chmod +x "$tmp/server.sh"
cat >"$tmp/picked.yaml" <<YAML
engine: generic
command: [$tmp/server.sh, --port, "{port}", --pid-file, "$tmp/pids-picked-{port}"]
startup_timeout: 20s
stop_timeout: 1s
YAML
"$GAUNTLET" run "$tmp/picked.yaml" --journal "$tmp/picked.db" >"$tmp/out3" 2>"$tmp/err3" ||
        { cat "$tmp/out3" "$tmp/err3"; fail "the picked-port sweep did not pass on its second launch"; }
grep -q "was taken by another process (.*port [0-9]* is answered by pid [0-9]* (gauntlet-fixtur)" "$tmp/err3" ||
        { cat "$tmp/err3"; fail "no notice naming the impostor of the picked port"; }
[ "$(sqlite3 "$tmp/picked.db" "SELECT count(*) FROM attempts")" -eq 2 ] || fail "not launched twice"
[ "$(sqlite3 "$tmp/picked.db" "SELECT count(*) FROM attempts WHERE state = 'abandoned' AND abandon_reason LIKE '%is answered by pid %not by a process of the server%'")" -eq 1 ] ||
        { sqlite3 "$tmp/picked.db" "SELECT state, abandon_reason FROM attempts" >&2; fail "no abandoned attempt naming the impostor"; }
"$GAUNTLET" report --format json "$tmp/picked.db" >"$tmp/r3.json"
[ "$(jq -r '.cells[0].verdict' "$tmp/r3.json")" = pass ] || fail "the picked-port cell: $(jq -c '.cells[0]' "$tmp/r3.json")"
kill "$(cat "$tmp/pids-impostord")" 2>/dev/null || true
wait "$(cat "$tmp/pids-impostord")" 2>/dev/null || true
for f in "$tmp"/pids-impostor-*; do xargs -r kill <"$f" 2>/dev/null || true; done
expect_none_alive "processes left after the picked-port sweep" 5
echo "port-owner.sh: all good"

#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# ports.sh -- the port a server is given: a port gauntlet picked that another process
# takes before the server binds it costs a relaunch on another port, not a crash verdict
# (whether the log says so or not), up to three launches, which the report shows beside
# the cell (a port of the engine's own that its line names, torch.distributed's store's,
# is named as such); a fixed port that something
# already listens on stops the sweep before any launch; a fixed port makes cells that
# could run side by side run one at a time.
. "$SRCDIR/tests/lib.sh"
command -v python3 >/dev/null || fail "python3 is needed"
command -v sqlite3 >/dev/null || fail "sqlite3 is needed"

# squat.py PORT READY: listens on 127.0.0.1:PORT (never answering), then touches READY
cat >"$tmp/squat.py" <<'PY'
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(16)
open(sys.argv[2], "w").close()
time.sleep(120)
PY
# The squat service: a child of this script, outside gauntlet, so a squatter is really
# another process (one a server started would be the server's, and its cgroup would end
# it with the server). It reads "PORT READY" lines from a FIFO and starts a squatter for
# each; their pids go where unsquat finds them.
mkfifo "$tmp/squat.fifo"
(
        exec 3<>"$tmp/squat.fifo"
        while read -r port ready <&3; do
                env -u GAUNTLET_ATTEMPT setsid python3 "$tmp/squat.py" "$port" "$ready" &
                echo $! >>"$tmp/squatters"
        done
) &
squatd=$!
# squat.sh PORT: another process listens on PORT once this returns 0
cat >"$tmp/squat.sh" <<EOF2
#!/bin/sh
ready="$tmp/squat-ready-\$1-\$\$"
echo "\$1 \$ready" >"$tmp/squat.fifo"
i=0
while [ ! -e "\$ready" ]; do
        [ \$i -lt 100 ] || exit 1
        sleep 0.05
        i=\$((i + 1))
done
EOF2
chmod +x "$tmp/squat.sh"
unsquat() { if [ -f "$tmp/squatters" ]; then xargs -r kill -9 <"$tmp/squatters" 2>/dev/null || true; fi; rm -f "$tmp/squatters"; }
trap 'unsquat; kill "$squatd" 2>/dev/null || true; cleanup' EXIT

# The server: with SQUAT=once a squatter takes its port just before its first launch,
# with SQUAT=always before every launch. With QUIET=1 a server that finds its port taken
# exits 3 without a word; otherwise the fixture tries to bind and says why it cannot.
cat >"$tmp/server.sh" <<EOF2
#!/bin/sh
port=\$2
n=\$(( \$(cat "$tmp/launches-\$SQUAT\$QUIET" 2>/dev/null || echo 0) + 1 ))
echo "\$n" >"$tmp/launches-\$SQUAT\$QUIET"
echo "\$port" >>"$tmp/ports-\$SQUAT\$QUIET"
if [ "\$SQUAT" = other ] && [ "\$n" -eq 1 ]; then
        # a port of the engine's own, not the one gauntlet gave it (torch.distributed's store)
        echo "torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 29501, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use"
        exit 1
fi
if [ "\$SQUAT" = always ] || { [ "\$SQUAT" = once ] && [ "\$n" -eq 1 ]; }; then
        "$tmp/squat.sh" "\$port" || exit 4
        # QUIET=2: a line that names another port, not what happened (gloo's rendezvous)
        [ "\$QUIET" = 2 ] && echo "gloo rendezvous on port 29600"
        [ -n "\$QUIET" ] && exit 3
fi
exec "$FIXTURE" "\$@"
EOF2
chmod +x "$tmp/server.sh"
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$tmp/server.sh, --port, "{port}", --pid-file, "$tmp/pids-{port}"]
startup_timeout: 10s
stop_timeout: 1s
axes:
  port:
    values:
      - {name: once, env: {SQUAT: once}}
      - {name: once-quiet, env: {SQUAT: once, QUIET: "1"}}
      - {name: once-quiet-port, env: {SQUAT: once, QUIET: "2"}}
      - {name: always, env: {SQUAT: always}}
      - {name: never, env: {SQUAT: never}}
      - {name: other, env: {SQUAT: other}}
YAML
set +e
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>"$tmp/err"
status=$?
set -e
cat "$tmp/out" "$tmp/err" >&2
[ "$status" -eq 0 ] || fail "exit $status, want 0"
unsquat
expect_none_alive "processes left"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json"
# once and once-quiet pass at their second launch; always gives up after three
for c in "once pass -" "once-quiet pass -" "once-quiet-port pass -" "always crash port" "never pass -" "other pass -"; do
        expect_verdict "$tmp/r.json" port "${c%% *}" "${c#* }"
done
launches() { cat "$tmp/launches-$1"; }
[ "$(launches once)" = 2 ] || fail "once: $(launches once) launches, want 2"
[ "$(launches once1)" = 2 ] || fail "once-quiet: $(launches once1) launches, want 2"
[ "$(launches once2)" = 2 ] || fail "once-quiet-port: $(launches once2) launches, want 2"
[ "$(launches always)" = 3 ] || fail "always: $(launches always) launches, want 3"
[ "$(launches never)" = 1 ] || fail "never: $(launches never) launches, want 1"
[ "$(launches other)" = 2 ] || fail "other: $(launches other) launches, want 2"
# every launch on a port of its own
for f in "$tmp"/ports-*; do
        [ "$(sort -u "$f" | wc -l)" -eq "$(wc -l <"$f")" ] || fail "a port was given twice: $(tr '\n' ' ' <"$f")"
done
# the relaunches are in the journal, each with why
abandoned=$(sqlite3 "$tmp/j.db" "SELECT count(*) FROM attempts WHERE state = 'abandoned' AND abandon_reason LIKE 'port % was taken by another process (%); launched again on another port'")
[ "$abandoned" -eq 5 ] || { sqlite3 "$tmp/j.db" "SELECT state, abandon_reason FROM attempts" >&2; fail "$abandoned abandoned attempts, want 5"; }
# a port found held after a silent death is the HTTP port, whatever port a line quotes
qhttp=$(head -1 "$tmp/ports-once2")
qwhy=$(sqlite3 "$tmp/j.db" "SELECT abandon_reason FROM attempts a JOIN cells c ON c.id = a.cell_id WHERE a.state = 'abandoned' AND c.env LIKE '%QUIET=2%'")
case "$qwhy" in "port $qhttp was taken by another process ("*"); launched again on another port") ;;
*) fail "once-quiet-port: abandoned for: $qwhy" ;; esac
sqlite3 "$tmp/j.db" "SELECT abandon_reason FROM attempts WHERE state = 'abandoned'" | grep "Address already in use" >/dev/null ||
        fail "no abandoned attempt quotes the server's log"
# a port the log names that is not the one gauntlet gave: the notice names both
other_why=$(sqlite3 "$tmp/j.db" "SELECT abandon_reason FROM attempts a JOIN cells c ON c.id = a.cell_id WHERE a.state = 'abandoned' AND c.env LIKE '%SQUAT=other%'")
ohttp=$(head -1 "$tmp/ports-other")
[ "$other_why" = "port 29501, one the server opens beside its HTTP port $ohttp, was taken by another process (torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 29501, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use); launched again" ] ||
        fail "other: abandoned for: $other_why"
[ "$(grep -c "was taken by another process" "$tmp/err")" -eq 6 ] || fail "want 6 notices of a relaunch"
# the reports show each cell's abandoned launches beside its verdict
jq -e '[.cells[] | [.axes.port, .abandoned]] | sort == [["always", 2], ["never", null], ["once", 1], ["once-quiet", 1], ["once-quiet-port", 1], ["other", 1]]' \
        "$tmp/r.json" >/dev/null || fail "the JSON report's abandoned launches: $(jq -c '[.cells[] | [.axes.port, .abandoned]]' "$tmp/r.json")"
"$GAUNTLET" report "$tmp/j.db" >"$tmp/r.txt"
[ "$(grep -c ": abandoned launches: [12]\(,\| (\).* was taken by another process" "$tmp/r.txt")" -eq 5 ] ||
        { cat "$tmp/r.txt" >&2; fail "the text report does not show the five cells launched again"; }
# each launch keeps its own log: the first says why it died, the last is the report's
logs=$(sqlite3 "$tmp/j.db" "SELECT a.log_path FROM attempts a JOIN cells c ON c.id = a.cell_id WHERE c.env LIKE '%SQUAT=always%' ORDER BY a.id")
[ "$(echo "$logs" | sort -u | wc -l)" -eq 3 ] || fail "the three launches of 'always' share logs: $logs"
for f in $logs; do grep -q "Address already in use" "$f" || fail "$f does not say why its launch died"; done

# A fixed port that something listens on: exit 2 before any launch, one line that names it.
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$tmp/squat.sh" "$port" || fail "the squatter on port $port did not start"
cat >"$tmp/fixed.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-fixed-{port}"]
port: $port
stop_timeout: 1s
axes:
  answer:
    values:
      - {name: right}
      - {name: right-too, env: {UNUSED: "1"}}
YAML
set +e
"$GAUNTLET" run "$tmp/fixed.yaml" --journal "$tmp/fixed.db" >"$tmp/out2" 2>"$tmp/err2"
status=$?
set -e
[ "$status" -eq 2 ] || { cat "$tmp/out2" "$tmp/err2"; fail "fixed port taken: exit $status, want 2"; }
grep -q "^gauntlet: port $port on 127.0.0.1 is taken by another process" "$tmp/err2" || { cat "$tmp/err2"; fail "no error naming the port"; }
[ ! -e "$tmp/pids-fixed-$port" ] || fail "a server was launched on a taken port"
[ "$(sqlite3 "$tmp/fixed.db" "SELECT count(*) FROM attempts")" -eq 0 ] || fail "attempts journaled for a taken port"

# Free again: the same sweep runs; on four GPUs with a GPU per cell the fixed port still
# makes its cells take turns.
unsquat
fake_gpus "$tmp/gpus.json" 4
echo "gpus_per_cell: 1" >>"$tmp/fixed.yaml"
GAUNTLET_FAKE_GPUS="$tmp/gpus.json" "$GAUNTLET" run "$tmp/fixed.yaml" --journal "$tmp/fixed.db" >"$tmp/out3" 2>"$tmp/err3" ||
        { cat "$tmp/out3" "$tmp/err3"; fail "the fixed-port sweep failed once the port was free"; }
grep -q "the matrix fixes port $port, so its cells run one at a time" "$tmp/err3" || { cat "$tmp/err3"; fail "no notice of one at a time"; }
grep -q "side by side" "$tmp/err3" && fail "cells on one fixed port ran side by side"
grep -q "^2 cells: 2 pass" "$tmp/out3" || { cat "$tmp/out3"; fail "the fixed-port cells did not both pass"; }
expect_none_alive "processes left after the fixed-port sweep"

# A server that binds its port (without SO_REUSEADDR, as some servers do), answers the
# probe with 503 while it loads and then dies has crashed: the remains of the probe's
# kept-alive connection hold the port against a bind, but nothing listens there, so it
# was not lost to another process and is not launched again.
cat >"$tmp/dies.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-dies-{port}", --no-reuseaddr, --load-time, "1.5",
          --die-at-load, --log, "fatal: the weights are corrupt"]
startup_timeout: 20s
stop_timeout: 1s
YAML
set +e
"$GAUNTLET" run "$tmp/dies.yaml" --journal "$tmp/dies.db" >"$tmp/out4" 2>"$tmp/err4"
set -e
grep -q "launched again" "$tmp/err4" "$tmp/out4" && { cat "$tmp/out4" "$tmp/err4"; fail "a crashed server was launched again on another port"; }
[ "$(ls "$tmp"/pids-dies-* | wc -l)" -eq 1 ] || fail "the crashed cell was launched $(ls "$tmp"/pids-dies-* | wc -l) times"
grep -q "crash/" "$tmp/out4" || { cat "$tmp/out4" "$tmp/err4"; fail "the dying server did not get a crash verdict"; }
expect_none_alive "processes left after the crashed server"
echo "ports.sh: all good"

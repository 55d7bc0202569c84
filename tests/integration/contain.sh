#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# contain.sh -- no process survives a sweep, however it daemonizes: a server that
# double-forks a daemon with an empty environment into a session of its own (so neither
# its token, nor its session, nor its descent finds it) leaves nothing after the sweep,
# with each server in a cgroup of its own and with the /proc ways forced
# (GAUNTLET_NO_CGROUP=1); and with cgroups, nothing after a rerun that follows a SIGKILL of
# gauntlet either (docs/supervisor.md "Stop"). Without cgroups on this host the cgroup part
# is skipped (exit 77, after the /proc part ran).
set -euo pipefail
# shellcheck source=tests/faults/lib.sh
. "$SRCDIR/tests/faults/lib.sh"
command -v sqlite3 >/dev/null || fail "sqlite3 is needed"
command -v jq >/dev/null || fail "jq is needed"

cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-{port}", --daemon, --helpers, "1", --helper-setsid]
startup_timeout: 20s
stop_timeout: 30s
axes:
  load:
    values:
      - {name: slow, args: [--load-time, "1.5"]}
      - {name: quick, args: [--load-time, "0.3"]}
      - {name: dies, args: [--load-time, "0.3", --die-at-load]}
YAML

# The token of the attempt now running in journal $1.
running_token() {
        sqlite3 "$1" "SELECT p.token FROM processes p JOIN attempts a ON a.id = p.attempt_id WHERE a.state = 'running' ORDER BY p.id DESC LIMIT 1" 2>/dev/null
}

# Checks that the daemon (the last line of the first pid file that has three) hides from
# the /proc ways: an empty environment, a session and a parent not the server's. With
# "cgroup", also that it is in the cgroup of the running attempt of journal $2. Prints
# its pid.
check_hidden() { # how journal
        local f="" main d sid ppid token cg
        wait_pid_lines 3 15 "$tmp/pids-*" || fail "$1: the server, its helper and its daemon did not start"
        for f in "$tmp"/pids-*; do [ "$(wc -l <"$f")" -ge 3 ] && break; done
        main=$(sed -n 1p "$f")
        d=$(sed -n 3p "$f")
        is_fixture "$d" || fail "$1: the daemon $d is not running"
        [ "$(tr -cd '\0' <"/proc/$d/environ" | wc -c)" -eq 0 ] || fail "$1: the daemon's environment is not empty"
        sid=$(ps -o sid= -p "$d" | tr -d ' ')
        ppid=$(ps -o ppid= -p "$d" | tr -d ' ')
        [ "$sid" != "$main" ] || fail "$1: the daemon is in the server's session"
        [ "$ppid" != "$main" ] || fail "$1: the daemon is the server's child"
        if [ "$1" = cgroup ]; then
                token=$(running_token "$2")
                [ -n "$token" ] || fail "cgroup: no running attempt in the journal"
                cg=$(sed -n 's/^0:://p' "/proc/$d/cgroup")
                [ "${cg##*/}" = "gauntlet-$token" ] || fail "cgroup: the daemon is in '$cg', not gauntlet-$token"
        fi
        echo "$d"
}

# One whole sweep: checks the daemon while the first server loads, then that nothing is
# left and that the journal's host fingerprint names the containment in force.
sweep() { # how (cgroup | procs), journal
        local how=$1 j=$2 d
        rm -f "$tmp"/pids-*
        if [ "$how" = procs ]; then
                GAUNTLET_NO_CGROUP=1 start_gauntlet "$how" run "$tmp/m.yaml" --journal "$j"
        else
                start_gauntlet "$how" run "$tmp/m.yaml" --journal "$j"
        fi
        d=$(check_hidden "$how" "$j")
        collect_pids
        wait_gauntlet
        [ "$status" -eq 0 ] || { cat "$tmp/out.$how" "$tmp/err.$how" >&2; fail "$how: the sweep gave status $status"; }
        collect_pids
        [ -z "$(alive_fixtures)" ] || fail "$how: left after the sweep: $(alive_fixtures | tr '\n' ' ') (the daemon was $d)"
        [ "$(sqlite3 "$j" "SELECT count(*) FROM attempts WHERE state = 'settled'")" -eq 3 ] || fail "$how: not 3 settled cells"
        got=$(sqlite3 "$j" "SELECT host_json FROM sweeps ORDER BY id DESC LIMIT 1" | jq -r .containment.method)
        [ "$got" = "$how" ] || fail "$how: the journal says containment '$got'"
        echo "$how: the daemon $d hid from the /proc ways, and nothing was left after the sweep"
}

# The /proc ways: the daemon is found all the same while gauntlet lives, as an orphan it
# adopted (a subreaper).
sweep procs "$tmp/procs.db"

reason=$("$GAUNTLET" doctor --format json | jq -r '.containment.reason // empty')
if [ "$("$GAUNTLET" doctor --format json | jq -r .containment.method)" != cgroup ]; then
        echo "SKIP: no cgroups on this host ($reason); the /proc part passed"
        exit 77
fi
cgdir=$("$GAUNTLET" doctor --format json | jq -r .containment.cgroup)
# Even when an assertion fails: the cgroups of this test's attempts go too (after their
# processes, which faults_cleanup kills).
contain_cleanup() {
        [ "$BASHPID" = "$$" ] || return 0
        local db t p
        for db in "$tmp"/*.db; do
                [ -f "$db" ] || continue
                for t in $(sqlite3 "$db" "SELECT DISTINCT token FROM processes WHERE token IS NOT NULL" 2>/dev/null); do
                        [ -d "$cgdir/gauntlet-$t" ] || continue
                        for p in $(cat "$cgdir/gauntlet-$t/cgroup.procs" 2>/dev/null); do kill -9 "$p" 2>/dev/null || true; done
                        sleep 0.2
                        rmdir "$cgdir/gauntlet-$t" 2>/dev/null || true
                done
        done
        faults_cleanup
}
trap contain_cleanup EXIT
sweep cgroup "$tmp/cgroup.db"
for t in $(sqlite3 "$tmp/cgroup.db" "SELECT DISTINCT token FROM processes WHERE token IS NOT NULL"); do
        [ ! -e "$cgdir/gauntlet-$t" ] || fail "cgroup: the cgroup gauntlet-$t is left"
done

# SIGKILL gauntlet while the server loads: the daemon outlives it; the next run finds the
# attempt's cgroup by name and ends all of it, daemon included, then removes the cgroup.
sed 's/"1.5"/"60"/' "$tmp/m.yaml" >"$tmp/long.yaml"
sed -i 's/startup_timeout: 20s/startup_timeout: 90s/' "$tmp/long.yaml"
rm -f "$tmp"/pids-*
start_gauntlet killed run "$tmp/long.yaml" --journal "$tmp/kill.db"
d=$(check_hidden cgroup "$tmp/kill.db")
token=$(running_token "$tmp/kill.db")
kill -KILL "$gpid"
wait_gauntlet
[ "$status" -eq 137 ] || fail "kill: gauntlet was not killed (status $status)"
collect_pids
left=$(cat "$tmp"/pids-*)
for p in $left; do is_fixture "$p" || fail "kill: pid $p of the killed run is gone already: nothing to find"; done
[ -d "$cgdir/gauntlet-$token" ] || fail "kill: no cgroup gauntlet-$token after the kill"
rm -f "$tmp"/pids-*
start_gauntlet rerun run "$tmp/long.yaml" --journal "$tmp/kill.db"
for _ in $(seq 200); do
        grep -q "left behind by an earlier run" "$tmp/err.rerun" && break
        kill -0 "$gpid" 2>/dev/null || break
        sleep 0.05
done
kill -TERM "$gpid" 2>/dev/null || true
wait_gauntlet
grep -q "stopped 3 processes left behind by an earlier run that was killed" "$tmp/err.rerun" ||
        { cat "$tmp/err.rerun" >&2; fail "rerun: it did not stop the killed run's server, helper and daemon"; }
for p in $left; do is_fixture "$p" && fail "rerun: pid $p of the killed run survived (the daemon was $d)"; done
[ ! -e "$cgdir/gauntlet-$token" ] || fail "rerun: the killed run's cgroup gauntlet-$token is left"
collect_pids
expect_no_fixture 5 "after the rerun"
echo "kill: the rerun ended the daemon $d of the killed run and removed its cgroup"
echo "contain.sh: all good"

#!/usr/bin/env bash
# tier: faults (tests/run faults)
# faults-sigint.sh -- SIGINT and SIGTERM during each phase of `gauntlet run` (launch,
# checks, bench) and during `gauntlet report` / `gauntlet emit`: run stops its server and
# helpers, abandons the attempt, exits 130, and the next run completes the sweep; report
# and emit just end, leaving the journal as it was (docs/faults.md).
set -euo pipefail
# shellcheck source=tests/faults/lib.sh
. "$SRCDIR/tests/faults/lib.sh"
started=$SECONDS

# The phase is recognised from outside, never guessed from a sleep alone:
#   launch  the server and its helpers are in the pid file, /health is 503 for 30 s;
#   checks  the ready line is in the cell's log and a request is in flight (tokens come
#           every 150 ms, so the checks take seconds);
#   bench   4 connections at once to the server: only the bench (concurrency 4) opens
#           that many.
matrix() { # name, extra fixture args...
        local name=$1
        shift
        local extra="" a
        for a in "$@"; do extra="$extra, \"$a\""; done
        cat >"$tmp/$name.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-$name-{port}", --helpers, "2", --helper-setsid$extra]
startup_timeout: 60s
request_timeout: 30s
stop_timeout: 1s
YAML
}
matrix launch --load-time 30 --ignore-sigterm
matrix checks --token-delay-ms 150
matrix bench --token-delay-ms 40
cat >>"$tmp/bench.yaml" <<YAML
bench: {concurrency: [4], output_tokens: 16, requests: 16}
YAML

port_of() { # name: the port of the running attempt, from its pid file's name
        local f
        for f in "$tmp"/pids-"$1"-*; do [ -f "$f" ] && echo "${f##*-}" && return 0; done
        return 1
}
in_launch() { [ "$(cat "$tmp"/pids-"$1"-* 2>/dev/null | wc -l)" -ge 3 ]; }
in_checks() {
        local port
        port=$(port_of "$1") || return 1
        grep -qs "server is ready" "$tmp/$1"/*/*.log && [ "$(established_to "$port")" -ge 1 ]
}
in_bench() {
        local port
        port=$(port_of "$1") || return 1
        [ "$(established_to "$port")" -ge 4 ]
}

interrupt() { # name, signal, round: start a run, wait for its phase, signal it
        local name=$1 sig=$2 round=$3 i t0
        rm -f "$tmp"/pids-"$name"-*
        start_gauntlet "$name$round" run "$tmp/$name.yaml" --journal "$tmp/$name.db"
        for i in $(seq 600); do
                "in_$name" "$name" && break
                kill -0 "$gpid" 2>/dev/null || { cat "$tmp/err.$name$round" >&2; fail "$name: gauntlet ended before the phase"; }
                sleep 0.05
        done
        "in_$name" "$name" || fail "$name: the phase was not reached in 30 s"
        # the checks take 6 s at this token rate: half a second in, they surely run
        [ "$name" != checks ] || sleep 0.5
        collect_pids
        t0=$SECONDS
        kill "-$sig" "$gpid"
        wait_gauntlet
        [ "$status" -eq 130 ] || { cat "$tmp/out.$name$round" "$tmp/err.$name$round" >&2; fail "$name: SIG$sig gave status $status, want 130"; }
        grep -q "interrupted by SIG$sig" "$tmp/err.$name$round" || { cat "$tmp/err.$name$round" >&2; fail "$name: no word of SIG$sig"; }
        # gauntlet waits for its processes before it exits: nothing is left, at once.
        [ -z "$(alive_fixtures)" ] || fail "$name: SIG$sig left processes: $(alive_fixtures | tr '\n' ' ')"
        [ $((SECONDS - t0)) -le 10 ] || fail "$name: SIG$sig took $((SECONDS - t0)) s to stop the server"
        journal_ok "$tmp/$name.db"
        local states
        states=$(sqlite3 "$tmp/$name.db" "SELECT group_concat(state || ':' || coalesce(abandon_reason, ''), ',') FROM (SELECT * FROM attempts ORDER BY id)")
        local want="abandoned:interrupted by a signal"
        [ "$round" = 1 ] || want="$want,$want"
        [ "$states" = "$want" ] || fail "$name: attempts after SIG$sig: '$states', want '$want'"
        echo "$name: SIG$sig stopped the run in $((SECONDS - t0)) s"
}

complete() { # name: a run to the end settles the one cell, once
        start_gauntlet "$1-final" run "$tmp/$1.yaml" --journal "$tmp/$1.db"
        wait_gauntlet
        [ "$status" -eq 0 ] || { cat "$tmp/out.$1-final" "$tmp/err.$1-final" >&2; fail "$1: the re-run gave status $status"; }
        expect_no_fixture 5 "after the re-run of $1"
        journal_ok "$tmp/$1.db"
        local got
        got=$(sqlite3 "$tmp/$1.db" "SELECT state, count(*) FROM attempts GROUP BY state ORDER BY state" | tr '\n' ' ')
        [ "$got" = "abandoned|2 settled|1 " ] || fail "$1: attempts after the re-run: $got"
}

# launch: the stubborn server (SIGTERM ignored, helpers in their own sessions) is killed.
interrupt launch INT 1
interrupt launch TERM 2
sed -i 's/--load-time", "30"/--load-time", "0.5"/' "$tmp/launch.yaml" # let the re-run finish
complete launch

interrupt checks INT 1
interrupt checks TERM 2
sed -i 's/"150"/"5"/' "$tmp/checks.yaml"
complete checks

interrupt bench TERM 1
interrupt bench INT 2
sed -i 's/"40"/"2"/' "$tmp/bench.yaml"
complete bench
jq -e '.cells[0].bench | length == 1' <("$GAUNTLET" report --format json "$tmp/bench.db") >/dev/null ||
        fail "bench: the re-run has no bench result"

# report and emit: signals while they run. report's stdout is a FIFO nobody reads, so it
# is caught mid-write (the JSON of this journal is larger than a pipe holds); emit's output
# is small, so it is signalled at random moments instead. Either way the exit is prompt,
# by the signal or with status 0, and the journal is untouched.
long=$(seq 1 3000 | tr '\n' ' ')
cat >"$tmp/big.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-big-{port}", --answer, "$long"]
startup_timeout: 10s
stop_timeout: 1s
axes:
  n:
    values: [{name: a}, {name: b, env: {N: "b"}}, {name: c, env: {N: "c"}}]
YAML
"$GAUNTLET" run "$tmp/big.yaml" --journal "$tmp/big.db" >/dev/null 2>&1 || true
expect_no_fixture 5 "after the big run"
# The journal's content is the database file and the frames of its write-ahead log. A
# reader killed between open and close may leave the shared-memory index (-shm) and an
# empty -wal behind; SQLite rebuilds the index and the empty log holds nothing, so neither
# is a change to the journal.
journal_sum() { { cat "$tmp/big.db"; [ ! -f "$tmp/big.db-wal" ] || cat "$tmp/big.db-wal"; } | sha256sum; }
sum_before=$(journal_sum)
mkfifo "$tmp/fifo"
exec 3<>"$tmp/fifo" # held open, never read: the writer blocks once the pipe is full
for sig in INT TERM; do
        "${DEFSIG[@]}" "$GAUNTLET" report --format json "$tmp/big.db" >"$tmp/fifo" 2>"$tmp/err.report" &
        rpid=$!
        blocked=0
        for _ in $(seq 200); do
                if grep -q '^State:.*S' "/proc/$rpid/status" 2>/dev/null && grep -qs pipe_write "/proc/$rpid/wchan"; then blocked=1; break; fi
                sleep 0.05
        done
        [ "$blocked" = 1 ] || fail "report: never blocked on its output ($(cat "/proc/$rpid/wchan" 2>/dev/null))"
        kill "-$sig" "$rpid"
        set +e
        wait "$rpid"
        status=$?
        set -e
        want=$((128 + $(kill -l "$sig")))
        [ "$status" -eq "$want" ] || { cat "$tmp/err.report" >&2; fail "report: SIG$sig gave status $status, want $want"; }
        cat <&3 >/dev/null & # drain what it wrote (ends with the timeout below)
        drain=$!
        sleep 0.2
        kill "$drain" 2>/dev/null || true
        wait "$drain" 2>/dev/null || true
done
exec 3>&-
cell=$(sqlite3 "$tmp/big.db" 'SELECT id FROM cells LIMIT 1')
for i in $(seq 20); do
        sig=INT
        [ $((i % 2)) = 0 ] && sig=TERM
        "${DEFSIG[@]}" "$GAUNTLET" emit systemd "$tmp/big.db" --cell "$cell" >"$tmp/unit" 2>"$tmp/err.emit" &
        epid=$!
        sleep "0.0$((RANDOM % 10))"
        kill "-$sig" "$epid" 2>/dev/null || true
        set +e
        wait "$epid"
        status=$?
        set -e
        case $status in
        0) grep -q '^\[Service\]' "$tmp/unit" || fail "emit: status 0 without a unit" ;;
        130 | 143) ;;
        *) cat "$tmp/err.emit" >&2; fail "emit: SIG$sig gave status $status" ;;
        esac
done
[ "$(journal_sum)" = "$sum_before" ] || fail "report or emit changed the journal"
journal_ok "$tmp/big.db"
echo "faults-sigint.sh: all good in $((SECONDS - started)) s"

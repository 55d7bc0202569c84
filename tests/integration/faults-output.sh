#!/usr/bin/env bash
# tier: faults (tests/run faults)
# faults-output.sh -- gauntlet's own output lost, and SIGHUP (docs/faults.md): `gauntlet
# run | head -1` stops the server in flight, abandons its attempt and exits 141 (not a
# death by SIGPIPE with the server left up); stdout on a full disk (/dev/full) and a
# closed stderr do the same at the next write; SIGHUP ends a run with 129, not 130.
set -euo pipefail
# shellcheck source=tests/faults/lib.sh
. "$SRCDIR/tests/faults/lib.sh"
started=$SECONDS

# Cell `fast` settles in a second (its line is the first on stdout); cell `slow` then
# loads for 30 s with 2 helpers in sessions of their own, so it is in flight when the
# output is found lost; `last` would follow.
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-{port}", --helpers, "2", --helper-setsid]
startup_timeout: 60s
stop_timeout: 1s
axes:
  load:
    flag: --load-time
    values: ["0.2", "30", "0.3"]
YAML

# Attempts as "state:reason" in order, and how many are still running.
attempts() { sqlite3 "$1" "SELECT group_concat(state || ':' || coalesce(abandon_reason, ''), ',') FROM (SELECT * FROM attempts ORDER BY id)"; }

check_stopped() { # tag, journal, status, want: the run ended as it must
        local tag=$1 db=$2 got=$3 want=$4
        [ "$got" -eq "$want" ] || { cat "$tmp/err.$tag" >&2 || true; fail "$tag: status $got, want $want"; }
        # gauntlet waits for its processes before it exits: nothing is left, at once
        [ -z "$(alive_fixtures)" ] || fail "$tag: processes left: $(alive_fixtures | tr '\n' ' ')"
        journal_ok "$db"
        [ "$(sqlite3 "$db" "SELECT count(*) FROM attempts WHERE state = 'running'")" = 0 ] ||
                fail "$tag: an attempt is left running: $(attempts "$db")"
        [ "$(sqlite3 "$db" "SELECT how FROM sweeps ORDER BY id DESC LIMIT 1")" = interrupted ] ||
                fail "$tag: the sweep is not marked interrupted"
}

# 1. | head -1: head reads the first cell's line and exits while `slow` loads. gauntlet
#    sees its stdout's reader gone (not only at its next line), stops the server and its
#    helpers, abandons the attempt and exits 141.
t0=$SECONDS
set +e
"${DEFSIG[@]}" "$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/head.db" 2>"$tmp/err.head" | head -n 1 >"$tmp/out.head"
st=("${PIPESTATUS[@]}")
set -e
took=$((SECONDS - t0))
collect_pids
[ "${st[1]}" -eq 0 ] || fail "head: status ${st[1]}"
grep -q 'load=0.2' "$tmp/out.head" || fail "head: the first line is not the first cell's: $(cat "$tmp/out.head")"
check_stopped head "$tmp/head.db" "${st[0]}" 141
[ "$took" -le 20 ] || fail "head: the run took $took s to end (the slow cell loads for 30 s)"
[ "$(attempts "$tmp/head.db")" = "settled:,abandoned:interrupted by a signal" ] ||
        fail "head: attempts '$(attempts "$tmp/head.db")', want the first settled and the second abandoned"
grep -q 'output lost' "$tmp/err.head" || { cat "$tmp/err.head" >&2; fail "head: no word of the lost output"; }
echo "| head -1: status 141, the slow cell's server stopped, in $took s"

# 2. stdout is /dev/full: the first line fails (ENOSPC), the next launch does not happen.
rm -f "$tmp"/pids-*
"${DEFSIG[@]}" "$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/full.db" >/dev/full 2>"$tmp/err.full" && st=0 || st=$?
collect_pids
check_stopped full "$tmp/full.db" "$st" 141
grep -q 'output lost' "$tmp/err.full" || { cat "$tmp/err.full" >&2; fail "full: no word of the lost output"; }
echo "stdout on /dev/full: status 141, nothing left"

# 3. stderr closed: gauntlet puts /dev/full there (main.c), so no file it opens takes fd 2
#    and receives its messages; a message, if one comes, fails and interrupts the run.
rm -f "$tmp"/pids-*
sed '/^axes:/,$d' "$tmp/m.yaml" >"$tmp/one.yaml"
"${DEFSIG[@]}" "$GAUNTLET" run "$tmp/one.yaml" --journal "$tmp/noerr.db" >"$tmp/out.noerr" 2>&- && st=0 || st=$?
collect_pids
[ -z "$(alive_fixtures)" ] || fail "closed stderr: processes left: $(alive_fixtures | tr '\n' ' ')"
journal_ok "$tmp/noerr.db"
[ ! -s "$tmp/noerr.db.lock" ] || ! grep -q gauntlet "$tmp/noerr.db.lock" || fail "closed stderr: a message went into the lock file"
[ "$(sqlite3 "$tmp/noerr.db" "SELECT count(*) FROM attempts WHERE state = 'running'")" = 0 ] ||
        fail "closed stderr: an attempt is left running"
case $st in 0 | 1 | 141) ;; *) fail "closed stderr: status $st" ;; esac
echo "closed stderr: status $st, nothing left"

# 4. SIGHUP: its own status, 129, and its own word.
rm -f "$tmp"/pids-*
"${DEFSIG[@]}" "$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/hup.db" >"$tmp/out.hup" 2>"$tmp/err.hup" &
gpid=$!
for _ in $(seq 600); do
        [ "$(cat "$tmp"/pids-* 2>/dev/null | wc -l)" -ge 6 ] && break # fast's 3, then slow's 3
        kill -0 "$gpid" 2>/dev/null || fail "hup: gauntlet ended before the slow cell"
        sleep 0.05
done
[ "$(cat "$tmp"/pids-* 2>/dev/null | wc -l)" -ge 6 ] || fail "hup: the slow cell did not start"
collect_pids
kill -HUP "$gpid"
wait_gauntlet
check_stopped hup "$tmp/hup.db" "$status" 129
grep -q 'interrupted by SIGHUP' "$tmp/err.hup" || { cat "$tmp/err.hup" >&2; fail "hup: no word of SIGHUP"; }
echo "SIGHUP: status 129, nothing left"

echo "faults-output.sh: all good in $((SECONDS - started)) s"

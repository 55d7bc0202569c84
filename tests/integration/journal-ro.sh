#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# journal-ro.sh -- `report` and `emit` read a journal on a read-only filesystem (where
# SQLite cannot make the WAL's -shm file): it is read as immutable. Needs a mount namespace
# (unshare -m, as root): skipped, by name, where there is none.
. "$SRCDIR/tests/lib.sh"
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --host, "{host}", --pid-file, "$tmp/pids-{port}"]
startup_timeout: 5s
stop_timeout: 1s
YAML
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "the sweep failed"; }
mkdir "$tmp/ro"
if ! unshare -m sh -c "mount -t tmpfs none '$tmp/ro'" 2>"$tmp/ns.err"; then
        echo "SKIP: no mount namespace here ($(head -c 200 "$tmp/ns.err"))"
        exit 77
fi
unshare -m sh -c '
        set -e
        mount -t tmpfs none "$1/ro"
        cp "$1/j.db" "$1/ro/j.db"
        mount -o remount,ro "$1/ro"
        "$2" report "$1/ro/j.db" >"$1/report.txt" 2>&1
        "$2" report --format json "$1/ro/j.db" >"$1/report.json" 2>&1
        "$2" emit systemd "$1/ro/j.db" >"$1/unit" 2>&1
' _ "$tmp" "$GAUNTLET" || { cat "$tmp"/report.txt "$tmp"/unit 2>/dev/null; fail "report or emit failed on a read-only journal"; }
grep -q "1 cell: 1 pass" "$tmp/report.txt" || { cat "$tmp/report.txt"; fail "the text report lacks its summary"; }
[ "$(jq -r '.cells[0].verdict' "$tmp/report.json")" = pass ] || fail "the JSON report lacks the cell"
grep -q '^ExecStart=' "$tmp/unit" || { cat "$tmp/unit"; fail "no unit from a read-only journal"; }
expect_none_alive "processes left"
echo "journal-ro.sh: all good"

#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# report-logs.sh -- a journal is data, not a path to read files with (#24 item 9): the HTML
# report shows log excerpts only from files under the journal's own run folder. A log_path
# edited (with sqlite3) to name a file outside it, or a symlink in the run folder that
# leads out, is named on the page and never read.
. "$SRCDIR/tests/lib.sh"
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --host, "{host}", --pid-file, "$tmp/pids-{port}"]
startup_timeout: 5s
stop_timeout: 1s
axes:
  b:
    values:
      - {name: good}
      - {name: dies, args: [--die-at-load, --log, "RuntimeError: CUDA error: no kernel image is available for execution on the device"]}
YAML
set +e
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>"$tmp/err"
set -e
expect_none_alive "processes left"
# as journaled: the crash's own log, excerpted around its evidence
"$GAUNTLET" report --format html "$tmp/j.db" >"$tmp/before.html" || fail "report --format html failed"
grep -q 'around line [0-9]* (the evidence, marked)' "$tmp/before.html" ||
        fail "no excerpt of the crash's own log: $(grep -o 'Log <code>[^<]*</code>[^<]*' "$tmp/before.html")"

# a file outside the run folder, as /etc/shadow would be
secret=$tmp/outside.txt
printf 'root:$6$saltsalt$NOT-FOR-THE-PAGE:19000:0:99999:7:::\n' >"$secret"
sqlite3 "$tmp/j.db" "UPDATE attempts SET log_path = '$secret' WHERE verdict = 'crash'"
"$GAUNTLET" report --format html "$tmp/j.db" >"$tmp/after.html" || fail "report --format html failed"
! grep -q 'NOT-FOR-THE-PAGE' "$tmp/after.html" || fail "the page shows the outside file's content"
grep -qF "Log <code>$secret</code> is not under this journal's run folder" "$tmp/after.html" ||
        fail "the outside path is not named: $(grep -o 'Log <code>[^<]*</code>[^<]*' "$tmp/after.html")"

# the same through a symlink inside the run folder, and through ..
log=$(sqlite3 "$tmp/j.db" "SELECT log_path FROM attempts WHERE verdict = 'pass' LIMIT 1")
case "$log" in /*) ;; *) log=$tmp/$log ;; esac
ln -s "$secret" "$(dirname "$log")/link.log"
for p in "$(dirname "$log")/link.log" "$(dirname "$log")/../../outside.txt"; do
        sqlite3 "$tmp/j.db" "UPDATE attempts SET log_path = '$p' WHERE verdict = 'crash'"
        "$GAUNTLET" report --format html "$tmp/j.db" >"$tmp/after.html" || fail "report --format html failed"
        ! grep -q 'NOT-FOR-THE-PAGE' "$tmp/after.html" || fail "$p: the page shows the outside file's content"
        grep -q "is not under this journal's run folder" "$tmp/after.html" || fail "$p: not refused"
done
echo "report-logs.sh: all good"

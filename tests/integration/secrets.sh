#!/usr/bin/env bash
# secrets.sh -- a key the server echoes into its log (and so into a crash's evidence) is
# masked in every report format, not only in HTML, and in the run's own lines; reports and
# logs are 0600; the journal keeps it (a cell must be relaunchable) and the systemd unit
# of a passing cell carries the real value.
. "$SRCDIR/tests/lib.sh"
key=hf_s3cr3tVALUE0123456789
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --host, "{host}", --pid-file, "$tmp/pids-{port}"]
env: {HF_TOKEN: "$key"}
startup_timeout: 5s
stop_timeout: 1s
axes:
  b:
    values:
      - {name: good}
      - {name: leaks, args: [--die-at-load, --log, "ERROR: the hub refused token $key"]}
YAML
set +e
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>"$tmp/err"
set -e
expect_none_alive "processes left"
# the run's own lines (progress, verdicts, notices) hide it too
! grep -q "$key" "$tmp/out" "$tmp/err" || fail "the run's output shows the key: $(grep -h -m1 "$key" "$tmp/out" "$tmp/err")"
grep -q "the hub refused token \*\*\*" "$tmp/out" || fail "the verdict line lacks the masked evidence: $(cat "$tmp/out")"
# what holds server output is private: the reports and the servers' logs
for f in "$tmp"/j/report.* "$tmp"/j/*/*.log; do
        [ "$(stat -c %a "$f")" = 600 ] || fail "$f is mode $(stat -c %a "$f"), want 600"
done
sqlite3 "$tmp/j.db" "SELECT evidence FROM attempts" | grep -q "$key" || fail "the journal lost the real value"
for f in text markdown json html; do
        "$GAUNTLET" report --format "$f" "$tmp/j.db" >"$tmp/r.$f" || fail "report --format $f failed"
        ! grep -q "$key" "$tmp/r.$f" || fail "report --format $f shows the key: $(grep -m1 "$key" "$tmp/r.$f")"
done
grep -q 'the hub refused token \*\*\*' "$tmp/r.json" || fail "the masked evidence is not in the JSON report: $(jq -c '.cells[].evidence' "$tmp/r.json")"
"$GAUNTLET" emit systemd "$tmp/j.db" >"$tmp/unit" || fail "emit failed"
grep -q "$key" "$tmp/unit" || fail "the unit lacks the real value it needs"
echo "secrets.sh: all good"

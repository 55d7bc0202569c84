#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# workload.sh -- one workload per journal (docs/journal.md): a sweep on the fixture, then the
# same matrix with bench.output_tokens changed: refused in one line, exit 2, nothing lost;
# with --rerun-changed every cell is measured again and the report ranks only the new
# figures; a cell whose only figures are of the old workload is left out, and counted.
. "$SRCDIR/tests/lib.sh"

matrix() { # output_tokens
        cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-{port}"]
startup_timeout: 10s
stop_timeout: 2s
probes: {long_context: false, sampling: false, multi_turn: false}
axes:
  speed:
    values:
      - {name: slow, args: [--token-delay-ms, "6"]}
      - {name: fast, args: [--token-delay-ms, "1"]}
bench: {concurrency: [1], output_tokens: $1, requests: 4, warmup: 0}
objective: output_tokens_per_s@1
YAML
}
attempts() { sqlite3 "$tmp/j.db" "SELECT count(*) FROM attempts WHERE state = 'settled'"; }

matrix 8
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "the first sweep failed"; }
[ "$(attempts)" = 2 ] || fail "the first sweep settled $(attempts) attempts, want 2"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r1.json"

# the bench changed: refused, one line, exit 2, the journal as it was
matrix 16
rc=0
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] || { cat "$tmp/out" "$tmp/err"; fail "a changed bench gave exit $rc, want 2"; }
[ "$(wc -l <"$tmp/err")" = 1 ] || { cat "$tmp/err"; fail "the refusal is not one line"; }
grep -q "journal '$tmp/j.db' was measured with bench.output_tokens 8, the matrix now says 16: use a new journal, or --rerun-changed to re-measure" "$tmp/err" ||
        { cat "$tmp/err"; fail "the refusal does not name the change"; }
[ ! -s "$tmp/out" ] || { cat "$tmp/out"; fail "a refused run printed a report"; }
[ "$(attempts)" = 2 ] || fail "the refused run changed the attempts ($(attempts))"
[ "$(sqlite3 "$tmp/j.db" "SELECT count(*) FROM sweeps")" = 1 ] || fail "the refused run began a sweep"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r2.json"
cmp -s <(jq -S .cells "$tmp/r1.json") <(jq -S .cells "$tmp/r2.json") || fail "the report changed after a refused run"

# --rerun-changed: both cells measured again under 16 tokens, the old attempts kept
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" --rerun-changed >"$tmp/out" 2>"$tmp/err" ||
        { cat "$tmp/out" "$tmp/err"; fail "--rerun-changed failed"; }
grep -q "its 2 cells are measured again" "$tmp/err" || { cat "$tmp/err"; fail "--rerun-changed did not say what it re-measures"; }
[ "$(attempts)" = 4 ] || fail "--rerun-changed left $(attempts) settled attempts, want 4"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r3.json"
jq -e '[.cells[] | .bench[] | .output_tokens_per_request] | length == 2 and all(. > 12)' \
        "$tmp/r3.json" >/dev/null || fail "the report shows figures of 8-token answers"
[ "$(jq -r .sweep.workload_left_out "$tmp/r3.json")" = 0 ] || fail "cells left out after every cell was re-measured"
old=$(jq -r .sweep.workload "$tmp/r1.json")
new=$(jq -r .sweep.workload "$tmp/r3.json")
[ -n "$new" ] && [ "$new" != null ] && [ "$new" != "$old" ] || fail "the workload hash did not change ($old, $new)"
[ "$(sqlite3 "$tmp/j.db" "SELECT count(DISTINCT workload) FROM attempts")" = 2 ] || fail "attempts do not record their workload"

# a re-measure cut short: the fast cell's only figures are the old workload's; the report
# ranks the slow cell alone and says one was left out, and the next run measures the fast one
fast=$(jq -r '.cells[] | select(.axes.speed == "fast") | .id' "$tmp/r3.json")
sqlite3 "$tmp/j.db" "UPDATE attempts SET state = 'abandoned' WHERE id = (SELECT max(id) FROM attempts WHERE cell_id = '$fast')"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r4.json"
"$GAUNTLET" report "$tmp/j.db" >"$tmp/r4.txt"
[ "$(jq -r .sweep.workload_left_out "$tmp/r4.json")" = 1 ] || fail "the cut-short cell is not counted as left out"
best=$(jq -r '.best as $b | .cells[] | select(.id == $b) | .axes.speed' "$tmp/r4.json")
[ "$best" = slow ] || fail "best is '$best': a figure of the old workload was ranked"
grep -q "1 cell measured under another bench, checks, eval, probes or objective left out" "$tmp/r4.txt" ||
        { cat "$tmp/r4.txt"; fail "the text report does not say a cell was left out"; }
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/out" "$tmp/err"; fail "the resume failed"; }
[ "$(attempts)" = 4 ] || fail "the resume left $(attempts) settled attempts, want 4"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r5.json"
best=$(jq -r '.best as $b | .cells[] | select(.id == $b) | .axes.speed' "$tmp/r5.json")
[ "$best" = fast ] || fail "best is '$best' once the fast cell was measured again"
expect_none_alive "processes left"
echo "workload.sh: all good"

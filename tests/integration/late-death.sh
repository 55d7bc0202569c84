#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# late-death.sh -- a server that passes its checks and dies under the bench's load is said
# to have died there: the progress line, the text report's row and the Markdown report's
# "Why the others failed" say "in the bench, after the checks passed" beside the log's line
# (an engine that serves the checks and dies at concurrency 4 is another failure than one
# that never starts); one that dies in its checks is not said so.
. "$SRCDIR/tests/lib.sh"
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-{port}", --load-time, "0.1"]
startup_timeout: 10s
stop_timeout: 2s
probes: false
checks: default
bench: {concurrency: [1, 4], input_tokens: 16, output_tokens: 8, requests: 16}
emit: []
axes:
  behaviour:
    values:
      - {name: fine, args: []}
      - {name: late, args: [--die-after-requests, "24"]}
      - {name: early, args: [--die-after-requests, "1"]}
YAML
rc=0
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 0 ] || fail "exit $rc: $(cat "$tmp/out" "$tmp/err")"
cat "$tmp/out"
grep 'behaviour=late' "$tmp/out" | grep -q 'crash/cuda .*in the bench, after the checks passed: RuntimeError: CUDA error: an illegal memory access' ||
        fail "the late death's line: $(grep 'behaviour=late' "$tmp/out")"
grep 'behaviour=early' "$tmp/out" | grep -q 'crash/cuda' || fail "the early death: $(grep 'behaviour=early' "$tmp/out")"
grep 'behaviour=early' "$tmp/out" | grep -q 'after the checks passed' && fail "the early death said to die in the bench"
"$GAUNTLET" report "$tmp/j.db" >"$tmp/r.txt"
grep -q 'late .*in the bench, after the checks passed: RuntimeError' "$tmp/r.txt" || fail "the text report: $(cat "$tmp/r.txt")"
"$GAUNTLET" report --format markdown "$tmp/j.db" >"$tmp/r.md"
grep -q '`behaviour=late`: \*\*crash\*\* / `cuda` (in the bench, after the checks passed)' "$tmp/r.md" ||
        fail "the Markdown report: $(grep -A3 'Why the others' "$tmp/r.md")"
expect_none_alive "fixture servers left"
echo "late-death: all good"

#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# search-stop.sh -- a failure no value explains stops the search (docs/search.md, "When
# nothing can pass"):
#   - the testbed (its context is 256 tokens) with a bench of 400-token prompts, strategy:
#     search over 3 of its backend axes: every cell that starts answers overload/context;
#     the search stops within 3 launches with one line saying why and what to change, exit
#     1 (no cell passed); the text and JSON reports say the same; a resume on the journal
#     says it again, launches nothing and journals nothing;
#   - the fixture whose every cell dies with "Address already in use" (a port taken outside
#     the matrix): it stops after the first cell, refused on three ports (gauntlet's two
#     launches again on other ports count), the line says to free the port.
. "$SRCDIR/tests/lib.sh"
export PATH="$(dirname "$TESTBED"):$PATH"
cat >"$tmp/m.yaml" <<'YAML'
engine: testbed
args: [--device-arch, sm_120, --mem-budget, 24M, --threads, 2]
startup_timeout: 20s
request_timeout: 30s
stop_timeout: 5s
axes:
  moe:
    flag: --moe-backend
    values: [nvfp4, auto, reference]
  gemm:
    flag: --gemm-backend
    values: [nvfp4, auto, reference]
  kv:
    values:
      - {name: bf16, args: []}
      - {name: fp8, args: [--fault-turn, "3"]}
strategy: search
checks: default
bench: {concurrency: [1], input_tokens: 400, output_tokens: 64, requests: 4}
objective: output_tokens_per_s@1
emit: []
YAML
rc=0
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "exit $rc where no cell can pass: $(cat "$tmp/out")"
n=$(grep -c '^\[launch ' "$tmp/out")
[ "$n" -ge 1 ] && [ "$n" -le 3 ] || fail "$n launches before stopping: $(cat "$tmp/out")"
[ "$(grep -c '^search: ' "$tmp/out")" = 1 ] || fail "not one search line: $(grep '^search: ' "$tmp/out")"
line=$(grep '^search: ' "$tmp/out")
case "$line" in
"search: stopped after $n launch"*"overload/context"*"shorten bench.input_tokens/output_tokens or give the server a longer context") ;;
*) fail "the stop line: $line" ;;
esac
grep -q '^\[launch .*overload/context' "$tmp/out" || fail "no cell answered overload/context: $(cat "$tmp/out")"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json"
[ "$(jq -r .search.stopped "$tmp/r.json")" = "nothing can pass" ] || fail "search.stopped: $(jq .search.stopped "$tmp/r.json")"
[ "$(jq -r .search.launches "$tmp/r.json")" = "$n" ] || fail "search.launches $(jq .search.launches "$tmp/r.json"), $n launched"
jq -r .search.stop_why "$tmp/r.json" | grep 'shorten bench.input_tokens' >/dev/null || fail "search.stop_why: $(jq .search.stop_why "$tmp/r.json")"
[ "$(jq '.summary["not run"]' "$tmp/r.json")" = 0 ] || fail "cells left unaccounted: $(jq -c .summary "$tmp/r.json")"
"$GAUNTLET" report "$tmp/j.db" | grep '^search: .*stopped: the bench does not fit the server.s context' >/dev/null ||
        fail "the text report: $("$GAUNTLET" report "$tmp/j.db" | grep '^search')"
# a resume reads the same failures: the same line, no launch, and the cells pruned for the
# same reasons are not journaled again
rows=$(sqlite3 "$tmp/j.db" "SELECT count(*) FROM attempts")
rc=0
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out2" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "the resume exits $rc"
[ "$(sqlite3 "$tmp/j.db" "SELECT count(*) FROM attempts")" = "$rows" ] ||
        fail "the resume journaled $(($(sqlite3 "$tmp/j.db" "SELECT count(*) FROM attempts") - rows)) attempts, want none"
[ "$(grep -c 'skipped/pruned' "$tmp/out2")" = "$(grep -c 'skipped/pruned' "$tmp/out")" ] ||
        fail "the resume did not say each pruned cell again"
! grep -q '^\[launch ' "$tmp/out2" || fail "the resume launched: $(grep '^\[launch ' "$tmp/out2")"
[ "$(grep '^search: ' "$tmp/out2")" = "$line" ] || fail "the resume says: $(grep '^search: ' "$tmp/out2")"
expect_none_alive "testbed servers left"

# --- a port taken outside the matrix, on the fixture ----------------------------------
cat >"$tmp/p.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --host, "{host}", --pid-file, "$tmp/pids-{port}", --die-at-load, --log, "OSError: [Errno 98] Address already in use"]
startup_timeout: 10s
stop_timeout: 2s
axes:
  delay:
    values:
      - {name: d40, args: [--token-delay-ms, "40"]}
      - {name: d20, args: [--token-delay-ms, "20"]}
  x:
    flag: --model
    values: [m1, m2, m3]
strategy: search
checks: default
emit: []
YAML
rc=0
"$GAUNTLET" run "$tmp/p.yaml" --journal "$tmp/p.db" >"$tmp/pout" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "exit $rc: $(cat "$tmp/pout")"
[ "$(grep -c '^\[launch ' "$tmp/pout")" = 1 ] || fail "not 1 cell: $(cat "$tmp/pout")"
# the cell's port crash is retried on two other ports (docs/search.md: those count as launches)
[ "$(grep -c 'was taken by another process.*launched again on another port' "$tmp/pout")" = 2 ] ||
        fail "not launched again twice: $(cat "$tmp/pout")"
grep -qE '^search: stopped after 3 launches: the server.s port is taken: 1 of 1 launched cell answered crash/port \(3 launches in all\).*free the port' "$tmp/pout" ||
        fail "the stop line: $(grep '^search' "$tmp/pout")"
expect_none_alive "fixture servers left"

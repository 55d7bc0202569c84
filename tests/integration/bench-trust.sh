#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# bench-trust.sh -- the bench's figures are right or refused, against the testbed:
#   - a server that fails requests under load is overload/http, with the server's words and
#     the concurrency; a sweep where every cell fails so names no best;
#   - a server right alone but wrong when batched (--batch-fault) is rejected with evidence
#     from the checks under load, while the sound one passes and is best;
#   - a bench the server's context cannot hold is refused before a request of it is sent;
#   - prompts are input_tokens long in the server's own count;
#   - repeats give medians and spreads, an SLA objective its figure and its search;
#   - a journal of schema 1 is upgraded in place and keeps its settled cells, which adopt
#     the matrix's workload with a note.
. "$SRCDIR/tests/lib.sh"
export PATH="$(dirname "$TESTBED"):$PATH"

run_sweep() { # name matrix-text
        printf '%s\n' "$2" >"$tmp/$1.yaml"
        set +e
        "$GAUNTLET" run "$tmp/$1.yaml" --journal "$tmp/$1.db" >"$tmp/$1.out" 2>&1
        local rc=$?
        set -e
        [ "$rc" -le 1 ] || { cat "$tmp/$1.out"; fail "$1: gauntlet run exit $rc"; }
        "$GAUNTLET" report --format json "$tmp/$1.db" >"$tmp/$1.json" || fail "$1: no JSON report"
}

common='engine: testbed
startup_timeout: 20s
request_timeout: 30s
stop_timeout: 5s
checks: default
emit: []'

# --- under load: a full queue, and a kernel wrong at batch > 1 ------------------------
run_sweep load "$common
args: [--threads, \"4\"]
axes:
  fault:
    values:
      - {name: sound}
      - {name: queue, args: [--threads, \"1\", --max-queue, \"1\"]}
      - {name: batch, args: [--batch-fault]}
bench: {concurrency: [1, 4], input_tokens: 32, output_tokens: 32, requests: 16}
# the sampling probe's runs go out together and catch the batch fault first
# (tests/integration/probes.sh): here it is the bench's checks under load that must
probes: false
objective: output_tokens_per_s@4"
expect_verdict "$tmp/load.json" fault sound "pass -"
expect_verdict "$tmp/load.json" fault queue "overload http"
ev=$(jq -r '.cells[] | select(.axes.fault == "queue") | .evidence' "$tmp/load.json")
case $ev in
"at concurrency 4: "*" requests failed; first: http_503: injected fault: the queue is full (--max-queue 1)") ;;
*) fail "queue: evidence '$ev'" ;;
esac
got=$(cell_verdict "$tmp/load.json" fault batch)
case $got in "wrong "* | "garbage "*) ;; *) fail "batch: got '$got', want wrong or garbage" ;; esac
ev=$(jq -r '.cells[] | select(.axes.fault == "batch") | .evidence' "$tmp/load.json")
case $ev in "under load at concurrency 4, "*) ;; *) fail "batch: evidence '$ev'" ;; esac
# right alone: the smoke suite of the batch cell passed, every check
[ "$(jq '[.cells[] | select(.axes.fault == "batch") | .checks[] | select(.verdict != "pass")] | length' "$tmp/load.json")" = 0 ] ||
        fail "batch: its smoke suite did not pass alone"
# the level at concurrency 1 asked the suite too, and it passed there
[ "$(jq '[.cells[] | select(.axes.fault == "batch") | .bench[0].checks_under_load[] | select(.verdict != "pass")] | length' "$tmp/load.json")" = 0 ] ||
        fail "batch: a check failed at concurrency 1, where nothing runs beside it"
best=$(jq -r .best "$tmp/load.json")
[ "$best" = "$(jq -r '.cells[] | select(.axes.fault == "sound") | .id' "$tmp/load.json")" ] || fail "best is '$best', not the sound cell"
grep -q "overload/http .*at concurrency 4" "$tmp/load.out" || { cat "$tmp/load.out"; fail "no progress line for the overload cell"; }

# every cell fails under load: no best, one line per cell says why
run_sweep none "$common
args: [--threads, \"1\", --max-queue, \"1\"]
axes:
  gemm: {flag: --gemm-backend, values: [nvfp4, reference]}
bench: {concurrency: [4], input_tokens: 16, output_tokens: 16, requests: 8}
objective: output_tokens_per_s@4"
[ "$(jq -r .best "$tmp/none.json")" = null ] || fail "a best among cells whose bench failed"
[ "$(grep -c 'overload/http .*requests failed; first: http_503' "$tmp/none.out")" = 2 ] ||
        { cat "$tmp/none.out"; fail "not one overload line per cell"; }
"$GAUNTLET" report "$tmp/none.db" >"$tmp/none.txt"
grep -q '^best: none' "$tmp/none.txt" || { cat "$tmp/none.txt"; fail "the text report names a best"; }
"$GAUNTLET" emit systemd "$tmp/none.db" >"$tmp/none.unit" 2>"$tmp/none.err" && fail "emit wrote a unit for a sweep with no best"

# the same failures allowed by the gate: pass
run_sweep allowed "$common
args: [--threads, \"1\", --max-queue, \"1\"]
axes:
  gemm: {flag: --gemm-backend, values: [nvfp4]}
bench: {concurrency: [1], input_tokens: 16, output_tokens: 16, requests: 8, max_failures: 100%}"
expect_verdict "$tmp/allowed.json" gemm nvfp4 "pass -"

# --- context and prompt length ------------------------------------------------------
run_sweep ctx "$common
axes:
  gemm: {flag: --gemm-backend, values: [nvfp4]}
bench: {concurrency: [1], input_tokens: 240, output_tokens: 64, requests: 4}"
expect_verdict "$tmp/ctx.json" gemm nvfp4 "overload context"
ev=$(jq -r '.cells[0].evidence' "$tmp/ctx.json")
case $ev in "the server's context holds 256 tokens per request; a bench request needs "*"(240 prompt + "*" template + 64 output)") ;;
*) fail "ctx: evidence '$ev'" ;; esac
grep -q "the server's context holds 256 tokens" "$tmp/ctx.out" || { cat "$tmp/ctx.out"; fail "ctx: not said before the bench"; }
[ "$(jq '.cells[0].bench' "$tmp/ctx.json")" = null ] || fail "ctx: bench levels ran anyway"

for n in 20 100 180; do
        run_sweep len$n "$common
axes:
  gemm: {flag: --gemm-backend, values: [nvfp4]}
bench: {concurrency: [1, 2], input_tokens: $n, output_tokens: 8, requests: 4}"
        jq -e --argjson n "$n" '[.cells[0].bench[] | (.prompt_tokens_per_request.min - .prompt_calibration.template_tokens) as $lo
                | (.prompt_tokens_per_request.max - .prompt_calibration.template_tokens) as $hi
                | select($lo < $n * 0.98 or $hi > $n * 1.02)] | length == 0' "$tmp/len$n.json" >/dev/null ||
                fail "input_tokens $n: the server counted $(jq -c '[.cells[0].bench[] | {prompt_tokens_per_request, prompt_calibration}]' "$tmp/len$n.json")"
done

# --- repeats, an SLA objective and its search -----------------------------------------
run_sweep sla "$common
args: [--threads, \"4\"]
axes:
  gemm: {flag: --gemm-backend, values: [nvfp4, reference]}
bench: {concurrency: [1, 4], input_tokens: 32, output_tokens: 32, requests: 8, repeats: 3, search: {max: 32, rounds: 3}}
objective: {metric: output_tokens_per_s, where: {ttft_p99_ms: 100000, requests_per_s: 0.001}}"
[ "$(jq -r .objective "$tmp/sla.json")" = "output_tokens_per_s where ttft_ms.p99<=100000,requests_per_s>=0.001" ] ||
        fail "sla: objective kept as '$(jq -r .objective "$tmp/sla.json")'"
jq -e '[.cells[].bench[] | select(.repeats != 3 or (.spread.output_tokens_per_s | length) != 2
        or .requests != 24)] | length == 0' "$tmp/sla.json" >/dev/null ||
        fail "sla: a level without its 3 repeats: $(jq -c '[.cells[].bench[] | {concurrency, repeats, requests, spread: .spread.output_tokens_per_s}]' "$tmp/sla.json")"
# limits no level breaks: the search climbs to its max
jq -e '[.cells[] | .sla.met == 32 and .sla.failed_at == null and ([.bench[] | select(.search)] | length) >= 1]
        | all' "$tmp/sla.json" >/dev/null || fail "sla: $(jq -c '[.cells[] | {sla, s: [.bench[] | {concurrency, search}]}]' "$tmp/sla.json")"
"$GAUNTLET" report "$tmp/sla.db" | grep '^best: .*SLA met up to 32 streams' >/dev/null || fail "sla: the text report lacks the SLA figure"
"$GAUNTLET" report --format markdown "$tmp/sla.db" | grep 'SLA met up to 32 streams' >/dev/null || fail "sla: the Markdown report lacks it"

# a limit every level breaks: nothing is eligible, no best
run_sweep slafail "$common
axes:
  gemm: {flag: --gemm-backend, values: [nvfp4]}
bench: {concurrency: [1, 2], input_tokens: 16, output_tokens: 16, requests: 4, search: {max: 8, rounds: 2}}
objective: {metric: output_tokens_per_s, at: 1, where: {ttft_p50_ms: 0.001}}"
[ "$(jq -r .best "$tmp/slafail.json")" = null ] || fail "slafail: a best that breaks the SLA"
[ "$(jq -r '.cells[0].sla.met' "$tmp/slafail.json")" = null ] || fail "slafail: SLA met?"

# --- a journal of schema 1 ------------------------------------------------------------
sqlite3 "$tmp/v1.db" <"$SRCDIR/tests/journals/v1.sql"
[ "$(sqlite3 "$tmp/v1.db" 'PRAGMA user_version')" = 1 ] || fail "v1.sql is not schema 1"
"$GAUNTLET" report --format json "$tmp/v1.db" >"$tmp/v1.json" || fail "no report from a schema-1 journal"
expect_verdict "$tmp/v1.json" queue unbounded "pass -"
[ "$(sqlite3 "$tmp/v1.db" 'PRAGMA user_version')" = 1 ] || fail "a report upgraded the journal: only a run may"
printf '%s\n' "engine: testbed
args: [--threads, \"1\"]
startup_timeout: 20s
request_timeout: 30s
stop_timeout: 5s
axes:
  queue:
    values:
      - {name: unbounded}
      - {name: q1, args: [--max-queue, \"1\"]}
checks: default
bench: {concurrency: [1, 4], input_tokens: 8, output_tokens: 16, requests: 8}
objective: output_tokens_per_s@4
emit: []" >"$tmp/v1.yaml"
"$GAUNTLET" run "$tmp/v1.yaml" --journal "$tmp/v1.db" >"$tmp/v1.out" 2>&1 || [ $? -eq 1 ] || { cat "$tmp/v1.out"; fail "run on a schema-1 journal"; }
[ "$(sqlite3 "$tmp/v1.db" 'PRAGMA user_version')" = 9 ] || fail "the journal was not upgraded"
# no workload stored: its attempts adopt the matrix's, and the run says so
grep -q "note: journal '$tmp/v1.db' does not say which bench, checks, eval, probes and objective its 1 attempt was measured under (written by an older gauntlet): it is taken as this matrix's" "$tmp/v1.out" ||
        { cat "$tmp/v1.out"; fail "the old journal's workload was adopted without a note"; }
"$GAUNTLET" report --format json "$tmp/v1.db" >"$tmp/v1b.json"
expect_verdict "$tmp/v1b.json" queue unbounded "pass -"
expect_verdict "$tmp/v1b.json" queue q1 "overload http"
[ "$(sqlite3 "$tmp/v1.db" "SELECT count(*) FROM attempts WHERE cell_id = (SELECT id FROM cells LIMIT 1)")" = 1 ] ||
        fail "the settled cell of the old journal ran again"
[ "$(sqlite3 "$tmp/v1.db" "PRAGMA foreign_key_check" | wc -l)" = 0 ] || fail "foreign keys broken by the upgrade"

expect_none_alive "testbed servers left"
echo "bench-trust.sh: all good"

#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# eval.sh -- the accuracy eval end to end, against the testbed and the fixture:
#   - a backend that passes the smoke suite but gets one answer in three wrong
#     (gauntlet-testbed --wrong-answers 3) is wrong/accuracy with its interval figures, in
#     every format, never best and never emitted; cells that answer like the reference pass;
#   - a resumed sweep reuses the journaled answers; a run killed during the eval runs
#     that cell again;
#   - the reference: the baseline, a `reference:` key, else the most accurate cell;
#   - min_agreement makes the differential gate (wrong/divergence);
#   - gauntlet smoke --eval FILE with a JSONL file, and its errors.
. "$SRCDIR/tests/lib.sh"

# --- the sweep: two correct backends, each also with the scripted fault ----------------
cat >"$tmp/m.yaml" <<YAML
engine: testbed
args: [--threads, "2"]
startup_timeout: 20s
request_timeout: 30s
stop_timeout: 5s
# The eval's gate is what this tests. The probes catch both faults first (a wrong turn 3 of
# the multi-turn probe, empty answers when the sampling probe's runs are batched:
# tests/integration/probes.sh), so they are off here, or the eval would never run.
probes: false
axes:
  moe:
    flag: --moe-backend
    values: [reference, nvfp4]
  fault:
    values:
      - {name: none}
      - {name: wrong, args: [--wrong-answers, "3"]}
      # a batched kernel's stride bug: every answer right alone (the smoke suite asks one
      # at a time), wrong when another generation runs beside it (the eval asks 8 at once)
      - {name: batch, args: [--batch-fault]}
exclude: [{moe: nvfp4, fault: batch}]
baseline: {moe: reference, fault: none}
eval: {builtin: [products], samples: 200}
YAML
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out1" 2>&1 || { cat "$tmp/out1"; fail "the sweep failed"; }
cat "$tmp/out1"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json"
# every pass shows its figures as it settles; the gate comes at the end
grep -q 'moe=reference fault=none .*pass .*eval 200/200 right, accuracy 1.000 \[0.981, 1.000\]' "$tmp/out1" ||
        fail "the run's line for the reference lacks its eval figures"
grep -q 'wrong/accuracy  accuracy 0\.[0-9]* \[0\.[0-9]*, 0\.[0-9]*\] ([0-9]*/200) below the reference' "$tmp/out1" ||
        fail "the run does not name the cells the gate turned wrong"

want() { # moe fault verdict cause
        local got
        got=$(jq -r --arg m "$1" --arg f "$2" '.cells[] | select(.axes.moe == $m and .axes.fault == $f) |
                "\(.verdict) \(.cause // "-")"' "$tmp/r.json")
        [ "$got" = "$3 $4" ] || fail "moe=$1 fault=$2: got '$got', want '$3 $4'"
}
want reference none pass -
want nvfp4 none pass -
want reference wrong wrong accuracy
want nvfp4 wrong wrong accuracy
want reference batch wrong accuracy
q() { jq -r --arg m "$1" --arg f "$2" ".cells[] | select(.axes.moe == \$m and .axes.fault == \$f) | $3" "$tmp/r.json"; }
jq -e '.cells[] | select(.axes.fault == "batch") | .checks | all(.verdict == "pass")' "$tmp/r.json" >/dev/null ||
        fail "the batch fault did not pass the smoke suite"
[ "$(q reference batch '.eval.correct')" -lt 100 ] || fail "the batch fault kept most answers under concurrency"
# the figures: n, correct, accuracy, a Wilson interval around it
for m in reference nvfp4; do
        for f in none wrong; do
                [ "$(q $m $f '.eval.n')" = 200 ] || fail "$m/$f: eval.n is not 200"
                jq -e --arg m $m --arg f $f '.cells[] | select(.axes.moe == $m and .axes.fault == $f) | .eval |
                        (.correct / .n - .accuracy | fabs) < 1e-9 and .ci95[0] <= .accuracy and .accuracy <= .ci95[1]
                        and .ci95[0] >= 0 and .ci95[1] <= 1' "$tmp/r.json" >/dev/null || fail "$m/$f: inconsistent figures"
        done
done
[ "$(q reference none '.eval.correct')" = 200 ] || fail "the reference backend does not answer every product"
[ "$(q nvfp4 none '.eval.correct')" = 200 ] || fail "the nvfp4 backend does not answer every product"
wrong=$(q reference wrong '.eval.correct')
[ "$wrong" -ge 110 ] && [ "$wrong" -le 155 ] || fail "the faulty backend has $wrong/200 right, not about two in three"
[ "$(q reference none '.eval.reference')" = true ] || fail "the baseline is not the reference"
[ "$(jq -r '.eval.reference_by' "$tmp/r.json")" = baseline ] || fail "reference_by is not baseline"
[ "$(jq -r '.eval.questions' "$tmp/r.json")" = 200 ] || fail "the view's eval lacks its question count"
ev=$(q reference wrong '.evidence')
[[ "$ev" == *"below the reference"*"two-proportion z-test z = -"*"p < 0.001 (95%)"* ]] || fail "evidence: $ev"
[ "$(q reference wrong '.eval.journal_verdict')" = pass ] || fail "the journal verdict under the gate is not pass"
[ "$(q reference wrong '.eval.vs_reference.below')" = true ] || fail "vs_reference.below is not true"
# the differential: identical answers, the first divergence, the logprob drift
[ "$(q nvfp4 none '.eval.vs_reference.agreement')" = 1 ] || fail "nvfp4 does not answer like the reference"
jq -e '.cells[] | select(.axes.moe == "nvfp4" and .axes.fault == "none") | .eval.vs_reference |
        .logprob_tokens > 0 and .logprob_mad >= 0 and .logprob_mad < 0.1' "$tmp/r.json" >/dev/null ||
        fail "no logprob figure for nvfp4: $(q nvfp4 none '.eval.vs_reference')"
[ "$(q reference wrong '.eval.vs_reference.identical')" = "$wrong" ] ||
        fail "the faulty cell's identical answers are not its right ones"
fd=$(q reference wrong '.eval.vs_reference.first_divergence | "\(.output) \(.reference_output)"')
[ -n "$fd" ] && [ "${fd% *}" != "${fd#* }" ] || fail "first divergence: '$fd'"
[ "$(q reference wrong '.eval.answers | length')" = 200 ] || fail "the answers are not in the JSON report"
# never best, never emitted
best=$(jq -r .best "$tmp/r.json")
[ "$(jq -r --arg b "$best" '.cells[] | select(.id == $b) | .axes.fault' "$tmp/r.json")" = none ] ||
        fail "best is a cell the gate turned wrong"
"$GAUNTLET" emit script "$tmp/j.db" >"$tmp/launch.sh"
! grep -q -- --wrong-answers "$tmp/launch.sh" || fail "emit chose a faulty cell"
grep -q '^# Eval (builtin:products): 200/200 right' "$tmp/launch.sh" || fail "emit's comments lack the eval figures"
# every format agrees
"$GAUNTLET" report "$tmp/j.db" >"$tmp/r.txt"
grep -q '^eval: builtin:products, 200 questions; reference [0-9a-f]\{8\} (baseline)' "$tmp/r.txt" || fail "text: no eval line"
grep -q 'wrong    accuracy' "$tmp/r.txt" || { cat "$tmp/r.txt"; fail "text: no wrong/accuracy row"; }
grep -q '6 cells: 2 pass, 3 wrong, 1 skipped' "$tmp/r.txt" || fail "text: the summary does not count the gated cells as wrong"
"$GAUNTLET" report --format markdown "$tmp/j.db" >"$tmp/r.md"
grep -q '| verdict | cause or figure | accuracy | cell |' "$tmp/r.md" || fail "markdown: no accuracy column"
grep -q '| wrong | `accuracy` | 0\.[0-9]* \[0\.[0-9]*, 0\.[0-9]*\] |' "$tmp/r.md" || fail "markdown: no gated row with figures"
"$GAUNTLET" report --format html "$tmp/j.db" >"$tmp/r.html"
grep -q '<section id="eval">' "$tmp/r.html" || fail "html: no eval section"
grep -q 'aria-label="accuracy of each configuration"' "$tmp/r.html" || fail "html: no accuracy chart"
expect_none_alive "processes left after the sweep"
echo "eval phase: $(jq -r '[.cells[] | select(.eval != null) | "\(.axes.moe)/\(.axes.fault) \(.phases_s.eval)s"] | join(", ")' "$tmp/r.json")"

# --- resume: nothing asked again, the same verdicts -----------------------------------
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out2" 2>&1 || { cat "$tmp/out2"; fail "the resumed run failed"; }
[ "$(grep -c '(journal)' "$tmp/out2")" = 5 ] || { cat "$tmp/out2"; fail "the resumed run launched a cell"; }
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r2.json"
diff <(jq -c '[.cells[] | [.id, .verdict, .cause, .eval.correct]]' "$tmp/r.json") \
     <(jq -c '[.cells[] | [.id, .verdict, .cause, .eval.correct]]' "$tmp/r2.json") || fail "the resumed report differs"
grep -q '^  [0-9a-f]\{8\} wrong/accuracy' "$tmp/out2" || fail "the resumed run does not repeat the gate"

# --- killed during the eval: that cell runs again -------------------------------------
cat >"$tmp/k.yaml" <<YAML
engine: testbed
args: [--threads, "1"]
startup_timeout: 20s
request_timeout: 30s
stop_timeout: 5s
eval: {builtin: [products], samples: 400, concurrency: 1}
YAML
"$GAUNTLET" run "$tmp/k.yaml" --journal "$tmp/k.db" >"$tmp/k1" 2>&1 &
gpid=$!
for _ in $(seq 100); do [ -n "$(find "$tmp/k" -name '*.log' 2>/dev/null)" ] && break; sleep 0.1; done
sleep 1.5 # launched in milliseconds, checked in a fraction of a second: now it is in the eval
kill -9 "$gpid"
wait "$gpid" 2>/dev/null || true
[ "$(sqlite3 "$tmp/k.db" "SELECT count(*) FROM attempts WHERE state = 'running'")" = 1 ] ||
        fail "the killed run did not leave its attempt in flight"
[ "$(sqlite3 "$tmp/k.db" "SELECT count(*) FROM eval_results")" = 0 ] || fail "answers of an unsettled attempt were journaled"
"$GAUNTLET" run "$tmp/k.yaml" --journal "$tmp/k.db" >"$tmp/k2" 2>&1 || { cat "$tmp/k2"; fail "the run after the kill failed"; }
grep -q 'left behind by an earlier run' "$tmp/k2" || { cat "$tmp/k2"; fail "the server of the killed run was not stopped"; }
grep -q 'pass .*eval 400/400 right' "$tmp/k2" || { cat "$tmp/k2"; fail "the cell was not evaluated again"; }
[ "$(sqlite3 "$tmp/k.db" "SELECT state FROM attempts ORDER BY id")" = "$(printf 'abandoned\nsettled')" ] ||
        fail "attempts: $(sqlite3 "$tmp/k.db" "SELECT id, state FROM attempts")"
"$GAUNTLET" report --format json "$tmp/k.db" >"$tmp/k.json"
echo "400 questions, concurrency 1: $(jq -r '.cells[0].phases_s.eval' "$tmp/k.json")s"

# --- the reference: named by reference:, else the most accurate -----------------------
sed -e 's/^baseline: .*/reference: {moe: nvfp4, fault: none}/' "$tmp/m.yaml" >"$tmp/named.yaml"
"$GAUNTLET" run "$tmp/named.yaml" --journal "$tmp/j.db" >"$tmp/out3" 2>&1 || { cat "$tmp/out3"; fail "named reference: run failed"; }
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r3.json"
[ "$(jq -r '.eval.reference_by' "$tmp/r3.json")" = reference ] || fail "a reference: key is not the reference"
[ "$(jq -r '.eval.reference as $r | .cells[] | select(.id == $r) | .axes.moe' "$tmp/r3.json")" = nvfp4 ] ||
        fail "the reference is not the cell reference: names"
sed -e '/^baseline: /d' "$tmp/m.yaml" >"$tmp/grid.yaml"
"$GAUNTLET" run "$tmp/grid.yaml" --journal "$tmp/j.db" >"$tmp/out4" 2>&1 || { cat "$tmp/out4"; fail "no baseline: run failed"; }
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r4.json"
[ "$(jq -r '.eval.reference_by' "$tmp/r4.json")" = "most accurate" ] || fail "without baseline: not the most accurate"
# the most accurate, ties to the nearest the defaults, then the earlier: reference/none
[ "$(jq -r '.eval.reference as $r | .cells[] | select(.id == $r) | "\(.axes.moe)/\(.axes.fault)"' "$tmp/r4.json")" = reference/none ] ||
        fail "the most accurate cell is not the reference"
[ "$(jq '[.cells[] | select(.cause == "accuracy")] | length' "$tmp/r4.json")" = 3 ] || fail "without baseline: the gate differs"

# --- the differential as a gate: min_agreement ----------------------------------------
# every answer is right (any digit), so accuracy cannot tell the cells apart; the answers can
for i in $(seq 10 69); do
        printf '{"id": "p%d", "prompt": "What is %d * %d?", "expect": {"regex": "[0-9]"}}\n' "$i" "$i" $((i + 7))
done >"$tmp/any.jsonl"
cat >"$tmp/agree.yaml" <<YAML
engine: testbed
args: [--threads, "2"]
startup_timeout: 20s
request_timeout: 30s
stop_timeout: 5s
probes: false   # the eval's gate is what this tests (see the first matrix)
axes:
  fault:
    values:
      - {name: none}
      - {name: wrong, args: [--wrong-answers, "3"]}
baseline: {fault: none}
eval: {file: any.jsonl, min_agreement: 0.9}
YAML
"$GAUNTLET" run "$tmp/agree.yaml" --journal "$tmp/a.db" >"$tmp/out5" 2>&1 || { cat "$tmp/out5"; fail "min_agreement: run failed"; }
"$GAUNTLET" report --format json "$tmp/a.db" >"$tmp/a.json"
[ "$(jq -r '.cells[] | select(.axes.fault == "wrong") | "\(.verdict) \(.cause) \(.eval.accuracy)"' "$tmp/a.json")" = "wrong divergence 1" ] ||
        fail "min_agreement: $(jq -c '.cells[] | {axes, verdict, cause, evidence}' "$tmp/a.json")"
jq -r '.cells[] | select(.axes.fault == "wrong") | .evidence' "$tmp/a.json" |
        grep -q 'answers identical to the reference [0-9a-f]*.s (0\.[0-9]*), below min_agreement 0.9; first divergence: p' ||
        fail "min_agreement evidence: $(jq -r '.cells[1].evidence' "$tmp/a.json")"
[ "$(jq -r '.cells[] | select(.axes.fault == "none") | .verdict' "$tmp/a.json")" = pass ] || fail "min_agreement: the reference did not pass"
expect_none_alive "processes left after the sweeps"

# --- smoke --eval against a running testbed ---------------------------------------------
"$TESTBED" --port 0 --host 127.0.0.1 --threads 2 >"$tmp/tb.log" 2>&1 &
echo $! >"$tmp/pids-tb"
for _ in $(seq 100); do
        url=$(grep -o 'listening on http://127.0.0.1:[0-9]*' "$tmp/tb.log" 2>/dev/null | cut -d' ' -f3 || true)
        [ -n "$url" ] && break
        sleep 0.1
done
[ -n "$url" ] || fail "the testbed did not come up: $(cat "$tmp/tb.log")"
cat >"$tmp/q.jsonl" <<'JSONL'
{"id": "mul", "prompt": "What is 12 * 12?", "expect": {"number": 144}}
{"prompt": "What is 99 * 3?", "expect": {"number": "297"}}

{"id": "hello", "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Who are you?"}], "expect": {"contains": "multiply"}}
{"id": "miss", "prompt": "What is 2 * 2?", "expect": "5"}
{"id": "re", "prompt": "Say something", "expect": {"regex": "^I can [a-z]+ numbers"}}
JSONL
"$GAUNTLET" smoke --url "$url" --eval "$tmp/q.jsonl" --concurrency 3 >"$tmp/s.txt" || { cat "$tmp/s.txt"; fail "smoke --eval: exit $?"; }
cat "$tmp/s.txt"
grep -q "^eval: file:$tmp/q.jsonl, 5 questions, 3 at a time: 4/5 right, accuracy 0.800 \[0.376, 0.964\]" "$tmp/s.txt" ||
        fail "smoke --eval: the figures"
grep -q '^  miss  wrong  expected "5", got: "4"' "$tmp/s.txt" || fail "smoke --eval: the wrong answer is not shown"
"$GAUNTLET" smoke --url "$url" --eval "$tmp/q.jsonl" --samples 2 --format json >"$tmp/s.json"
[ "$(jq -r '.eval | "\(.questions) \(.n) \(.answers | length)"' "$tmp/s.json")" = "2 2 2" ] ||
        fail "smoke --eval --samples 2: $(jq -c .eval "$tmp/s.json")"
"$GAUNTLET" smoke --url "$url" --eval builtin:products --samples 30 --format json >"$tmp/s2.json"
[ "$(jq -r '.eval | "\(.source) \(.n) \(.correct)"' "$tmp/s2.json")" = "builtin:products 30 30" ] ||
        fail "smoke --eval builtin:products: $(jq -c '.eval | del(.answers)' "$tmp/s2.json")"
jq -e '.eval.answers | all(.verdict == "pass")' "$tmp/s2.json" >/dev/null || fail "smoke --eval: an answer is not pass"
# errors: a bad line names the file and the line, exit 2; options without --eval
printf '{"prompt": "a", "expect": "b"}\n{"prompt": "a", "expected": "b"}\n' >"$tmp/bad.jsonl"
set +e
"$GAUNTLET" smoke --url "$url" --eval "$tmp/bad.jsonl" >/dev/null 2>"$tmp/e1"; rc1=$?
"$GAUNTLET" smoke --url "$url" --samples 3 >/dev/null 2>"$tmp/e2"; rc2=$?
"$GAUNTLET" smoke --url "$url" --eval builtin:nope >/dev/null 2>"$tmp/e3"; rc3=$?
set -e
[ "$rc1" = 2 ] && grep -q "^gauntlet: $tmp/bad.jsonl:2: unknown key 'expected' in a question (did you mean 'expect'?)" "$tmp/e1" ||
        fail "bad eval file: exit $rc1, $(cat "$tmp/e1")"
[ "$rc2" = 2 ] && grep -q 'go with --eval' "$tmp/e2" || fail "--samples without --eval: exit $rc2, $(cat "$tmp/e2")"
[ "$rc3" = 2 ] && grep -q "unknown built-in eval set 'nope'" "$tmp/e3" || fail "builtin:nope: exit $rc3, $(cat "$tmp/e3")"
# a matrix's eval file with a bad line: the eval file's own line, exit 2
printf 'engine: testbed\neval: {file: bad.jsonl}\n' >"$tmp/badm.yaml"
set +e
"$GAUNTLET" run "$tmp/badm.yaml" --journal "$tmp/b.db" >/dev/null 2>"$tmp/e4"; rc4=$?
set -e
[ "$rc4" = 2 ] && grep -q "^gauntlet: $tmp/bad.jsonl:2: unknown key 'expected'" "$tmp/e4" ||
        fail "matrix with a bad eval file: exit $rc4, $(cat "$tmp/e4")"
kill "$(cat "$tmp/pids-tb")"
echo "eval.sh: all good"

#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# probes.sh -- the probes (docs/checks.md "Probes") through `gauntlet smoke`: against the
# fixture scripted to fail only at long context, only while sampling, only from turn 3,
# each caught with its verdict, cause and evidence; the context read from /v1/models, from
# a refusal, from --context; the controls' fallbacks; and the real testbed passing every
# probe (the time it took printed: docs/checks.md has the figures).
. "$SRCDIR/tests/smoke-lib.sh"
TESTBED=${TESTBED:-$PWD/build/bin/gauntlet-testbed}

# field NAME KEY: a check's field, as jq prints it raw
field() { jq -r --arg n "$1" --arg k "$2" '.checks[] | select(.name == $n) | .[$k]' "$tmp/out.json"; }
expect_eq() {
        if [ "$2" != "$3" ]; then soft_fail "$1: got [$2], want [$3]"; return 1; fi
        echo "ok: $1"
}
expect_match() {
        if ! [[ $2 =~ $3 ]]; then soft_fail "$1: got [$2], want /$3/"; return 1; fi
        echo "ok: $1"
}
probe_verdicts() { jq -r '[.checks[] | select(.name | test("^(long-context|sampling/|multi-turn)")) | .verdict] | unique | join(",")' "$tmp/out.json"; }

# 1. a correct server that says its context and has /tokenize: every probe passes, the
#    long prompt at 75% of 8,192 less the answer's room, by the server's own count
start --max-model-len 8192 --tokenize || exit 1
smoke 0 && {
        expect_eq "correct: results" "$(jq '.checks | length' "$tmp/out.json")" 15
        expect_eq "correct: every probe passes" "$(probe_verdicts)" pass
        expect_match "correct: long-context at 75% of 8,192" "$(field long-context detail)" \
                '^[0-9,]+ prompt tokens \((7[0-5])% of 8,192, context from /v1/models\), passkey [0-9]{5} at depth [0-9]+%, [0-9.]+s$'
        pt=$(field long-context prompt_tokens)
        expect_match "correct: prompt tokens near the target 6,144" "$pt" '^[0-9]+$' &&
                { [ "$pt" -ge 5500 ] && [ "$pt" -le 6144 ] || soft_fail "prompt tokens $pt not in [5500, 6144]"; }
        expect_match "correct: the control recalled" "$(field long-context/control detail)" '^recalled [0-9]{5} at short context$'
        expect_match "correct: sampling k of n" "$(field sampling/math detail)" '^right in 5 of 5 at temperature 0.7, top_p 0.95; 5 at once, 15 requests in'
        expect_match "correct: multi-turn recalls" "$(field multi-turn/stream detail)" '^3 turns; turn 3 recalled [0-9]+ from turn 1$'
}

# 2. garbage only past 2,000 words of prompt: garbage/repeat at long context, the rest pass
start --max-model-len 8192 --answer-past-words 2000='++++++++++++++++++++++++++++++++' || exit 1
smoke 1 && {
        expect_eq "long garbage: verdict" "$(jq -r .verdict "$tmp/out.json")" garbage
        expect_eq "long garbage: cause" "$(jq -r .cause "$tmp/out.json")" repeat
        expect_eq "long garbage: the probe" "$(field long-context verdict)" garbage
        expect_eq "long garbage: the control passed" "$(field long-context/control verdict)" pass
        expect_eq "long garbage: golden checks pass" "$(field math verdict)" pass
        expect_eq "long garbage: sampling passes" "$(field sampling/math verdict)" pass
}

# 3. a wrong number past 2,000 words: wrong/long-context with where it was asked
start --max-model-len 8192 --answer-past-words 2000=12345 || exit 1
smoke 1 && {
        expect_eq "long wrong: cause" "$(jq -r .cause "$tmp/out.json")" long-context
        expect_match "long wrong: evidence" "$(jq -r .evidence "$tmp/out.json")" \
                '^expected [0-9]{5} at [0-9,]+ tokens \([0-9]+% of 8,192\), depth [0-9]+%, got: "12345"$'
}

# 4. a model that cannot recall even alone: the long request asks the suite's first
#    question it answered right ("Reply with exactly: OK") after the filler instead
start --max-model-len 8192 --no-recall || exit 1
smoke 0 && {
        expect_eq "no recall: control is no failure" "$(field long-context/control verdict)" pass
        expect_match "no recall: control says so" "$(field long-context/control detail)" \
                '^the model does not recall [0-9]{5} at short context \(got "I am a fixture."\): the long request asks "Reply with exactly: OK"'
        expect_eq "no recall: judged on OK" "$(field long-context output)" OK
        expect_match "no recall: detail" "$(field long-context detail)" '"Reply with exactly: OK" asked after the filler'
        expect_match "no recall: multi-turn asks the suite's own question" "$(field multi-turn detail)" \
                'the model does not recall in one turn: turn 3 asked "Reply with exactly: OK"'
        expect_eq "no recall: turn 3 answer" "$(field multi-turn output)" OK
}
start --max-model-len 8192 --no-recall --answer-past-words 2000=324 || exit 1
smoke 1 && expect_match "no recall, long wrong: evidence" "$(jq -r .evidence "$tmp/out.json")" \
        '^expected "OK" for "Reply with exactly: OK" after the filler, at [0-9,]+ tokens .*, got: "324"$'

# 5. the context from a refusal (vLLM's 400), and from --context
start --context-limit 4000 || exit 1
smoke 0 && {
        expect_match "refusal: context learnt" "$(field long-context detail)" "of 4,000, context from the server's refusal"
        pt=$(field long-context prompt_tokens)
        [ "$pt" -le 4000 ] && [ "$pt" -ge 2500 ] && echo "ok: refusal: prompt fits ($pt)" || soft_fail "refusal: prompt tokens $pt"
}
# a refusal that says no number: halved until a prompt is taken
start --context-limit 3000 --context-limit-silent || exit 1
smoke 0 --probes long-context && {
        expect_match "silent refusal: halved" "$(field long-context detail)" 'the longest prompt it took, halving'
        pt=$(field long-context prompt_tokens)
        [ "$pt" -le 3000 ] && [ "$pt" -ge 1000 ] && echo "ok: silent refusal: prompt fits ($pt)" ||
                soft_fail "silent refusal: prompt tokens $pt"
}
start || exit 1
smoke 0 --context 3000 --probes long-context && {
        expect_match "--context: used" "$(field long-context detail)" 'of 3,000, context from probes.long_context.context'
        expect_eq "--probes long-context: only it" "$(jq '.checks | length' "$tmp/out.json")" 9
}
smoke 0 --context 100 --probes long-context && {
        expect_eq "tiny context: skipped" "$(field long-context verdict)" skipped
        expect_match "tiny context: why" "$(field long-context evidence)" 'too small for a long-context probe'
        expect_eq "tiny context: the suite still passes" "$(jq -r .verdict "$tmp/out.json")" pass
}
start --context-limit 4000 --max-model-len 4000 || exit 1
smoke 0 --probes long-context --long-context-share 0.5 && {
        expect_match "--long-context-share 0.5" "$(field long-context detail)" '\((4[0-9]|50)% of 4,000'
}

# 6. garbage only while sampling; wrong in two seeds of five
start --answer-sampling '!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!' || exit 1
smoke 1 --probes sampling && {
        expect_eq "sampling garbage: verdict" "$(jq -r .verdict "$tmp/out.json")" garbage
        expect_match "sampling garbage: evidence names the run" "$(jq -r .evidence "$tmp/out.json")" \
                '^sampling run 1 of 5 \(temperature 0.7\): '
        expect_eq "sampling garbage: greedy passed" "$(field ok verdict)" pass
}
start --answer-sampling 'I am not sure.' --sampling-seeds 2,4 || exit 1
smoke 1 --engine vllm --probes sampling && {
        expect_eq "sampling 3 of 5: cause" "$(jq -r .cause "$tmp/out.json")" sampling
        expect_match "sampling 3 of 5: evidence" "$(jq -r .evidence "$tmp/out.json")" \
                '^right in 3 of 5 at temperature 0.7, top_p 0.95: expected'
        expect_match "sampling 3 of 5: seeds said" "$(field sampling/math detail)" 'seeds 1-5'
}
smoke 0 --engine vllm --probes sampling --sampling-min-right 3 && echo "ok: --sampling-min-right 3 passes 3 of 5"
smoke 1 --engine vllm --probes sampling --sampling-runs 2 --sampling-min-right 2 &&
        expect_match "2 runs: seed 2 wrong" "$(jq -r .evidence "$tmp/out.json")" '^right in 1 of 2'

# 7. garbage from the third turn on; a wrong recall
start --answer-from-turn 3='a S componentes_obs Worce!!!!!!!!!!!!!!!!!!!!!!!!' || exit 1
smoke 1 --probes multi-turn && {
        expect_eq "turn 3 garbage: verdict" "$(field multi-turn verdict)" garbage
        expect_match "turn 3 garbage: evidence" "$(field multi-turn evidence)" '^turn 3: '
        expect_eq "turn 3 garbage: streamed too" "$(field multi-turn/stream verdict)" garbage
        expect_eq "turn 3 garbage: the control passed" "$(field multi-turn/control verdict)" pass
}
start --answer-from-turn 3=55 || exit 1
smoke 1 --probes multi-turn && expect_match "turn 3 wrong: evidence" "$(jq -r .evidence "$tmp/out.json")" \
        '^turn 3: expected [0-9]+ \(the number from turn 1\), got: "55"$'
# 8. all off: the golden suite alone (the fixture still answers 55 from turn 3; nothing asks)
smoke 0 --probes none && expect_eq "--probes none: 7 results" "$(jq '.checks | length' "$tmp/out.json")" 7

# 9. bad flags: exit 2 and one error line naming the flag (then the usual "try" line)
for bad in "--probes bogus" "--long-context-share 0" "--long-context-share 1.5" "--sampling-runs 0" \
           "--sampling-runs 51" "--sampling-min-right 6" "--context 0" "--long-context-max-tokens 10" \
           "--long-context-timeout 0s"; do
        # shellcheck disable=SC2086
        "$GAUNTLET" smoke --url http://127.0.0.1:1 $bad >/dev/null 2>"$tmp/err"
        st=$?
        flag=${bad%% *}
        [ "$st" -eq 2 ] && [ "$(grep -c '^gauntlet: ' "$tmp/err")" -eq 1 ] && grep -q -- "^gauntlet: .*$flag" "$tmp/err" &&
                echo "ok: $bad: exit 2, one line" ||
                soft_fail "$bad: exit $st, $(cat "$tmp/err")"
done

# 10. the real testbed (context 256, no /tokenize): every probe passes, through the
#     fallbacks (it cannot recall), the time it took printed
stop
log="$tmp/tb.log"
"$TESTBED" --port 0 >"$log" 2>&1 &
PID=$!
for i in $(seq 200); do
        PORT=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log" | head -1)
        [ -n "$PORT" ] && break
        sleep 0.05
done
[ -n "$PORT" ] || fail "the testbed did not start: $(cat "$log")"
t0=$(date +%s.%N)
smoke 0 --engine testbed && {
        t1=$(date +%s.%N)
        expect_eq "testbed: every probe passes" "$(probe_verdicts)" pass
        expect_eq "testbed: results" "$(jq '.checks | length' "$tmp/out.json")" 15
        pt=$(field long-context prompt_tokens)
        [ "$pt" -le 256 ] && [ "$pt" -ge 120 ] && echo "ok: testbed: long prompt $pt tokens of 256" ||
                soft_fail "testbed: long prompt $pt tokens"
        expect_match "testbed: context from /v1/models" "$(field long-context detail)" 'of 256, context from /v1/models'
        secs=$(echo "$t1 - $t0" | bc)
        echo "testbed: the suite and the probes in ${secs}s"
}
stop

# 11. a sweep of the testbed with its scripted faults: the probes catch what the golden
#     checks alone pass (a KV cache broken from the third turn; a batched kernel's stride
#     bug, which the eval caught before, tests/integration/eval.sh); the
#     honest cell passes every probe, its details journaled and reported
cat >"$tmp/m.yaml" <<YAML
engine: testbed
args: [--threads, "2"]
startup_timeout: 20s
request_timeout: 30s
stop_timeout: 5s
axes:
  fault:
    values:
      - {name: none}
      - {name: wrong, args: [--fault-turn, "3"]}
      - {name: batch, args: [--batch-fault]}
YAML
PATH="$(dirname "$TESTBED"):$PATH" "$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/run.out" 2>&1 ||
        { cat "$tmp/run.out"; fail "the sweep failed"; }
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json"
cell() { jq -r --arg f "$1" --arg k "$2" '.cells[] | select(.axes.fault == $f) | .[$k]' "$tmp/r.json"; }
expect_eq "sweep: honest cell passes" "$(cell none verdict)" pass
expect_eq "sweep: its probes journaled with detail" \
        "$(jq -r '.cells[] | select(.axes.fault == "none") | [.checks[] | select(.name | test("^(long-context|sampling/|multi-turn)")) | select(.detail != null)] | length' "$tmp/r.json")" 8
expect_match "sweep: --fault-turn 3 caught by multi-turn" "$(cell wrong evidence)" '^turn 3: run of'
expect_match "sweep: --batch-fault caught by sampling" "$(cell batch evidence)" '^sampling run [0-9]+ of 5'
"$GAUNTLET" report --format text "$tmp/j.db" >"$tmp/r.txt"
grep -q ': probes: long-context pass (' "$tmp/r.txt" && echo "ok: text report: probes line" || soft_fail "text report: no probes line"
"$GAUNTLET" report --format markdown "$tmp/j.db" >"$tmp/r.md"
grep -q '^#### Probes' "$tmp/r.md" && echo "ok: markdown report: probes" || soft_fail "markdown report: no probes"
finish probes

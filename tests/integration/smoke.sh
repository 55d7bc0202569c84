#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# smoke.sh -- `gauntlet smoke` against the scripted fixture server: right, garbage, wrong,
# broken HTTP, hung and unreachable servers each get their verdict, cause and exit status.
. "$SRCDIR/tests/smoke-lib.sh"

# top FIELD: the suite's own field (the first, least indented occurrence).
top() { grep -m1 "^  \"$1\": " "$tmp/out.json" | sed 's/^  "[a-z_]*": //; s/,$//'; }
# check_field NAME FIELD: a field of the named check in the JSON output.
check_field() {
        awk -v name="\"name\": \"$1\"," -v field="\"$2\": " '
                index($0, name) { inside = 1; next }
                inside && index($0, field) { sub(/^ *"[a-z_]*": /, ""); sub(/,$/, ""); print; exit }
                inside && /^    }/ { exit }' "$tmp/out.json"
}
expect_eq() { # description, got, want
        if [ "$2" != "$3" ]; then soft_fail "$1: got [$2], want [$3]"; sed 's/^/    /' "$tmp/out.json" | head -n 30; return 1; fi
        echo "ok: $1"
}
expect_match() { # description, got, regex
        if ! [[ $2 =~ $3 ]]; then soft_fail "$1: got [$2], want /$3/"; return 1; fi
        echo "ok: $1"
}

# 1. a correct server passes, every check, both streamed and not
start || exit 1
smoke 0 && {
        expect_eq "correct: verdict" "$(top verdict)" '"pass"'
        expect_eq "correct: model learnt from /v1/models" "$(top model)" '"fixture-model"'
        # the 7 golden results, then the probes' 8 (tests/integration/probes.sh): two controls,
        # long-context, sampling/{ok,math,math-thinking}, multi-turn and multi-turn/stream
        expect_eq "correct: 7 checks and 8 probe results ran" "$(grep -c '"name": ' "$tmp/out.json")" 15
        expect_eq "correct: every probe passed" \
                "$(jq -r '[.checks[] | select(.name | test("^(long-context|sampling/|multi-turn)")) | .verdict] | unique | join(",")' "$tmp/out.json")" pass
        expect_eq "correct: math answer" "$(check_field math output)" '"323"'
        expect_eq "correct: streamed math is streamed" "$(check_field math/stream streamed)" true
        expect_match "correct: streamed math has a ttft" "$(check_field math/stream ttft_s)" '^[0-9.e-]+$'
        expect_match "correct: thinking check has reasoning" "$(check_field math-thinking reasoning)" '^"[^"]+'
}
# the text format: one aligned line per check and the verdict last
"$GAUNTLET" smoke --url "http://127.0.0.1:$PORT/v1" >"$tmp/out.txt" 2>"$tmp/err"
st=$?
expect_eq "text: exit 0" "$st" 0
expect_eq "text: last line" "$(tail -n 1 "$tmp/out.txt")" "verdict: pass"
expect_match "text: a line per check" "$(grep -c -E '^(models|ok|math)[a-z/-]* +pass ' "$tmp/out.txt")" '^7$'

# 2. the Qwen token-0 collapse: garbage/repeat
start --answer '!!!!!!!!!!!!!!!!!!!!!!!!' || exit 1
smoke 1 && {
        expect_eq "bangs: verdict" "$(top verdict)" '"garbage"'
        expect_eq "bangs: cause" "$(top cause)" '"repeat"'
        expect_match "bangs: evidence quotes the output" "$(top evidence)" '!!!!'
}

# 3. coherent but wrong: wrong, cause = the check's name, evidence says what was expected
start --answer-for '17 * 19=17 * 19 = 324.' || exit 1
smoke 1 && {
        expect_eq "wrong: verdict" "$(top verdict)" '"wrong"'
        expect_eq "wrong: cause" "$(top cause)" '"math"'
        expect_match "wrong: evidence" "$(top evidence)" 'expected 323, got: .*324'
        expect_eq "wrong: ok still passes" "$(check_field ok verdict)" '"pass"'
}

# 4. HTTP 500 on completions: garbage/http with the status as evidence
start --http-500 || exit 1
smoke 1 && {
        expect_eq "500: verdict" "$(top verdict)" '"garbage"'
        expect_eq "500: cause" "$(top cause)" '"http"'
        expect_match "500: evidence" "$(top evidence)" 'HTTP 500'
        expect_eq "500: models still pass" "$(check_field models verdict)" '"pass"'
}

# 5. llama.cpp's error event inside a 200 stream: garbage/http on the streamed runs too
start --stream-error-event || exit 1
smoke 1 && {
        expect_eq "error event: verdict" "$(top verdict)" '"garbage"'
        expect_eq "error event: streamed cause" "$(check_field ok/stream cause)" '"http"'
        expect_match "error event: streamed evidence" "$(check_field ok/stream evidence)" 'does not match'
}

# 6. a server that never answers: timeout/request, bounded by --timeout
start --hang-requests || exit 1
t0=$SECONDS
smoke 1 --timeout 300ms && {
        expect_eq "hang: verdict" "$(top verdict)" '"timeout"'
        expect_eq "hang: cause" "$(top cause)" '"request"'
        expect_match "hang: evidence" "$(top evidence)" 'within 300ms'
}
expect_match "hang: finished in time" "$((SECONDS - t0))" '^[0-5]$'

# 7. thinking asked for, no reasoning part: wrong
start --no-reasoning || exit 1
smoke 1 && {
        expect_eq "no reasoning: verdict" "$(top verdict)" '"wrong"'
        expect_eq "no reasoning: cause" "$(top cause)" '"math-thinking"'
        expect_eq "no reasoning: evidence" "$(top evidence)" '"no reasoning part"'
        expect_eq "no reasoning: thinking off passes" "$(check_field math verdict)" '"pass"'
}

# 8. vLLM's field name for reasoning is read too
start --reasoning-field reasoning || exit 1
smoke 0 --engine vllm && expect_eq "reasoning field: verdict" "$(top verdict)" '"pass"'

# 9. a stream cut without [DONE]: garbage/http "connection closed mid-stream"
start --close-mid-stream || exit 1
smoke 1 && {
        expect_eq "cut stream: cause" "$(check_field ok/stream cause)" '"http"'
        expect_eq "cut stream: evidence" "$(check_field ok/stream evidence)" '"connection closed mid-stream"'
        expect_eq "cut stream: non-streamed passes" "$(check_field ok verdict)" '"pass"'
}

# 10. broken JSON in the stream: garbage/http, a parse error, not a crash
start --malformed-sse || exit 1
smoke 1 && expect_match "malformed: evidence" "$(check_field ok/stream evidence)" 'malformed JSON'

# 11. a stream that stalls: timeout/request with what arrived so far
start --stall-after-chunks 2 || exit 1
smoke 1 --timeout 300ms && expect_eq "stall: cause" "$(check_field ok/stream cause)" '"request"'

# 12. streamed and non-streamed answers must agree at temperature 0
start --answer-for '17 * 19=323' --token-delay-ms 1 || exit 1
smoke 0 && expect_eq "agree: verdict" "$(top verdict)" '"pass"'

# 13. a custom suite file
cat >"$tmp/suite.yaml" <<'EOF'
- name: capital
  prompt: "What is the capital of France?"
  expect: {contains: Paris}
EOF
start --answer-for 'France=The capital of France is Paris.' || exit 1
if "$GAUNTLET" smoke --url "http://127.0.0.1:$PORT" --checks "$tmp/suite.yaml" >"$tmp/out.txt" 2>"$tmp/err"; then
        expect_match "suite file: check ran" "$(cat "$tmp/out.txt")" 'capital +pass'
else
        soft_fail "suite file: smoke failed: $(cat "$tmp/out.txt" "$tmp/err")"
fi

# 14. SIGINT stops a suite that waits on a hung server, at once and cleanly
start --hang-requests || exit 1
"$GAUNTLET" smoke --url "http://127.0.0.1:$PORT" --timeout 30s >"$tmp/out.txt" 2>"$tmp/err" &
gp=$!
sleep 0.5
t0=$SECONDS
kill -INT "$gp"
wait "$gp"
st=$?
expect_eq "sigint: exit 1" "$st" 1
expect_match "sigint: stopped at once" "$((SECONDS - t0))" '^[0-2]$'
expect_match "sigint: says so" "$(cat "$tmp/err")" 'interrupted'

# 15. nobody listening: exit 1, verdict error, a clear message
stop
smoke 1 && {
        expect_eq "unreachable: verdict" "$(top verdict)" '"error"'
        expect_match "unreachable: message" "$(cat "$tmp/err")" "cannot reach .*connection refused"
}

# 16. usage errors exit 2
"$GAUNTLET" smoke >/dev/null 2>&1; expect_eq "no --url: exit 2" "$?" 2
"$GAUNTLET" smoke --url ftp://x >/dev/null 2>&1; expect_eq "bad url: exit 2" "$?" 2
"$GAUNTLET" smoke --url http://127.0.0.1:1 --timeout soon >/dev/null 2>&1; expect_eq "bad timeout: exit 2" "$?" 2
"$GAUNTLET" smoke --url http://127.0.0.1:1 --engine nope >/dev/null 2>&1; expect_eq "bad engine: exit 2" "$?" 2
"$GAUNTLET" smoke --url http://127.0.0.1:1 --bogus >/dev/null 2>&1; expect_eq "bad flag: exit 2" "$?" 2
"$GAUNTLET" smoke --url http://127.0.0.1:1 --checks "$tmp/missing.yaml" >/dev/null 2>&1
expect_eq "missing suite: exit 2" "$?" 2

finish smoke

#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# testbed.sh -- gauntlet-testbed as a process: the API, streaming, every fault flag, the
# sm_100-only backend refusing on sm_120, the OOM death by SIGKILL, and nothing left behind.
#
# With testbed/model.gguf present, the trained model's answers are checked too (OK, 323,
# reasoning); without it, a random-weight model in the same format stands in and the
# answer checks are skipped with a note.
set -u
: "${TESTBED:?}" "${SRCDIR:?}"
tmp=$(mktemp -d)
pids=()
cleanup() {
        for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
        rm -rf "$tmp"
}
trap cleanup EXIT
. "$SRCDIR/tests/assert.sh"

trained=0
if [ -f "$SRCDIR/testbed/model.gguf" ]; then
        model="$SRCDIR/testbed/model.gguf"
        trained=1
else
        echo "note: testbed/model.gguf is not there yet: a random-weight model stands in, answers are not checked"
        model="$tmp/random.gguf"
        "$TESTBED" --write-random-model "$model" || fail "cannot write a random model"
fi

# start NAME ARGS...: launches the testbed on a free port (--port 0); sets pid, log, port
# once /health is served (the loading line names the port). Waits at most 10 s.
start() {
        local name=$1; shift
        log="$tmp/$name.log"
        fail_log=$log
        "$TESTBED" --model "$model" --port 0 "$@" >"$log" 2>&1 &
        pid=$!
        pids+=("$pid")
        port=
        local deadline=$((SECONDS + 10))
        while [ $SECONDS -lt $deadline ]; do
                port=$(sed -n 's/.*http:\/\/127\.0\.0\.1:\([0-9]*\)\/health answers 503.*/\1/p' "$log" | head -1)
                [ -n "$port" ] && return 0
                kill -0 "$pid" 2>/dev/null || return 1
                sleep 0.05
        done
        return 1
}
# wait_ready: until the ready line is printed (or the process ends)
wait_ready() {
        local deadline=$((SECONDS + 10))
        while [ $SECONDS -lt $deadline ]; do
                grep -q "listening on http://" "$log" && return 0
                kill -0 "$pid" 2>/dev/null || return 1
                sleep 0.05
        done
        return 1
}
stop() { kill -TERM "$pid" 2>/dev/null; wait "$pid"; }
url() { echo "http://127.0.0.1:$port$1"; }
chat() { # chat JSON-BODY -> response body; status in $tmp/status
        curl -s -o "$tmp/body" -w '%{http_code}' --max-time 20 -H 'Content-Type: application/json' \
                -d "$1" "$(url /v1/chat/completions)" >"$tmp/status"
        cat "$tmp/body"
}
jget() { python3 -c "import sys,json; d=json.load(sys.stdin); print(eval('d'+sys.argv[1]))" "$1"; }

# ---- a bad flag is a usage error with argparse's wording
"$TESTBED" --moe-backend cutlass >"$tmp/bad.log" 2>&1
[ $? -eq 2 ] || fail "a bad backend should exit 2"
grep -q "invalid choice: 'cutlass'" "$tmp/bad.log" || fail "no 'invalid choice' message"
"$TESTBED" --gemm-backend shuffled >"$tmp/bad.log" 2>&1
[ $? -eq 2 ] || fail "shuffled is not a GEMM backend"
"$TESTBED" --version | grep '^gauntlet-testbed ' >/dev/null || fail "--version"

# ---- serving
start plain --threads 4 || fail "did not start"
wait_ready || fail "never ready"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$(url /health)")" = 200 ] || fail "/health is not 200 when ready"
curl -s "$(url /v1/models)" | jget '["data"][0]["id"]' >/dev/null || fail "/v1/models"
body=$(chat '{"messages":[{"role":"user","content":"Reply with exactly: OK"}],"temperature":0,"max_tokens":16,"logprobs":true,"top_logprobs":3}')
[ "$(cat "$tmp/status")" = 200 ] || fail "chat status $(cat "$tmp/status"): $body"
echo "$body" | python3 -c '
import sys, json
d = json.load(sys.stdin)
c = d["choices"][0]
assert c["message"]["role"] == "assistant"
assert c["finish_reason"] in ("stop", "length"), c
u = d["usage"]
assert u["completion_tokens"] >= 1 and u["total_tokens"] == u["prompt_tokens"] + u["completion_tokens"], u
lp = c["logprobs"]["content"]
assert len(lp) == u["completion_tokens"], (len(lp), u)
assert all(len(e["top_logprobs"]) == 3 and e["logprob"] <= 0 for e in lp)
' || fail "chat response shape: $body"
ok_answer=$(echo "$body" | jget '["choices"][0]["message"]["content"]')

# streaming with usage: role first, deltas, finish, usage, [DONE]
curl -sN --max-time 20 -d '{"messages":[{"role":"user","content":"Count to 5."}],"temperature":0,"max_tokens":40,"stream":true,"stream_options":{"include_usage":true}}' \
        "$(url /v1/chat/completions)" >"$tmp/stream" || fail "stream request failed"
python3 - "$tmp/stream" <<'EOF' || fail "stream shape: $(head -c 2000 "$tmp/stream")"
import sys, json
lines = [l for l in open(sys.argv[1]).read().split("\n") if l]
assert all(l.startswith("data: ") for l in lines), lines
assert lines[-1] == "data: [DONE]"
ev = [json.loads(l[6:]) for l in lines[:-1]]
assert ev[0]["choices"][0]["delta"]["role"] == "assistant"
assert ev[-1]["choices"] == [] and ev[-1]["usage"]["completion_tokens"] >= 1
fin = [e for e in ev if e["choices"] and e["choices"][0]["finish_reason"]]
assert len(fin) == 1 and fin[0]["choices"][0]["finish_reason"] in ("stop", "length")
tokens = sum(1 for e in ev[1:] if e["choices"] and e["choices"][0]["finish_reason"] is None)
assert tokens == ev[-1]["usage"]["completion_tokens"], (tokens, ev[-1]["usage"])
EOF

# completions, with integer logprobs and ignore_eos for an exact length
curl -s --max-time 20 -d '{"prompt":"1 2 3","max_tokens":12,"ignore_eos":true,"temperature":0,"logprobs":2}' "$(url /v1/completions)" | python3 -c '
import sys, json
d = json.load(sys.stdin)
c = d["choices"][0]
assert d["object"] == "text_completion" and c["finish_reason"] == "length", d
assert d["usage"]["completion_tokens"] == 12
assert len(c["logprobs"]["tokens"]) == 12 and len(c["logprobs"]["top_logprobs"][0]) >= 1
' || fail "completion"

# errors: bad JSON 400, bad field 400, oversized body 413, unknown route 404
[ "$(curl -s -o "$tmp/e" -w '%{http_code}' -d '{"messages":' "$(url /v1/chat/completions)")" = 400 ] || fail "bad JSON is not 400"
jget '["error"]["code"]' <"$tmp/e" | grep 400 >/dev/null || fail "error object: $(cat "$tmp/e")"
[ "$(curl -s -o /dev/null -w '%{http_code}' -d '{"messages":[{"role":"user","content":"x"}],"max_tokens":-3}' "$(url /v1/chat/completions)")" = 400 ] || fail "bad max_tokens is not 400"
head -c 1100000 /dev/zero | tr '\0' 'a' >"$tmp/big"
[ "$(curl -s -o /dev/null -w '%{http_code}' --data-binary @"$tmp/big" "$(url /v1/chat/completions)")" = 413 ] || fail "a 1.1 MB body is not 413"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$(url /nope)")" = 404 ] || fail "unknown route is not 404"

# several requests in flight at once
for i in 1 2 3 4 5 6; do
        curl -s --max-time 20 -o "$tmp/par$i" -w '%{http_code}' -d '{"prompt":"x","max_tokens":100,"ignore_eos":true}' "$(url /v1/completions)" >"$tmp/par$i.status" &
done
wait_pids=$(jobs -p | grep -v -w "$pid" || true)
for j in $wait_pids; do wait "$j"; done
for i in 1 2 3 4 5 6; do
        [ "$(cat "$tmp/par$i.status")" = 200 ] || fail "parallel request $i: $(cat "$tmp/par$i.status")"
        [ "$(jget '["usage"]["completion_tokens"]' <"$tmp/par$i")" = 100 ] || fail "parallel request $i short"
done
curl -s "$(url /metrics)" >"$tmp/metrics"
# vLLM's series names, each with the model_name label vLLM puts on them
grep -q '^vllm:time_to_first_token_seconds_bucket{model_name="[^"]*",le="+Inf"} [1-9]' "$tmp/metrics" || fail "no TTFT histogram"
grep -q '^vllm:inter_token_latency_seconds_count{model_name="[^"]*"} [1-9]' "$tmp/metrics" || fail "no ITL histogram"
grep -q '^vllm:generation_tokens_total{model_name="[^"]*"} [1-9]' "$tmp/metrics" || fail "no token counter"
grep -q '^vllm:prompt_tokens_total{model_name="[^"]*"} [1-9]' "$tmp/metrics" || fail "no prompt token counter"
grep -q '^vllm:kv_cache_usage_perc{model_name="[^"]*"} 0.000000$' "$tmp/metrics" || fail "KV usage not 0 when idle"
grep -q '^vllm:num_requests_running{model_name="[^"]*"} 0$' "$tmp/metrics" || fail "running not 0 when idle"
grep -q '^testbed:requests_total{endpoint="chat",outcome="client_error"} [1-9]' "$tmp/metrics" || fail "no request counter"

# /tokenize counts a message's content as the chat prompt does; /props and /v1/models the context
n_bare=$(curl -s -d '{"messages":[{"role":"user","content":"x"}]}' "$(url /tokenize)" | jget '["count"]')
n_long=$(curl -s -d '{"messages":[{"role":"user","content":"What is 17 * 19? <|end|> \u00d7"}]}' "$(url /tokenize)" | jget '["count"]')
n_text=$(curl -s -d '{"content":"What is 17 * 19? <|end|> \u00d7","add_special":false}' "$(url /tokenize)" | jget '["count"]')
[ "$((n_long - n_bare))" = "$((n_text - 1))" ] || fail "/tokenize: chat $n_long - $n_bare vs content $n_text"
[ "$n_text" = 27 ] || fail "/tokenize: 'What is 17 * 19? <|end|> ×' is $n_text tokens, want 27 (one per character, × two bytes)"
[ "$(curl -s -d '{"content":"ab","add_special":true}' "$(url /tokenize)" | jget '["tokens"][0]')" = 1 ] || fail "/tokenize add_special: no <s>"
p_usage=$(chat '{"messages":[{"role":"user","content":"What is 17 * 19? <|end|> \u00d7"}],"max_tokens":1}' | jget '["usage"]["prompt_tokens"]')
[ "$p_usage" = "$n_long" ] || fail "/tokenize of the messages says $n_long, the chat's usage $p_usage"
[ "$(curl -s "$(url /props)" | jget '["default_generation_settings"]["n_ctx"]')" = 256 ] || fail "/props n_ctx"
[ "$(curl -s "$(url /v1/models)" | jget '["data"][0]["max_model_len"]')" = 256 ] || fail "/v1/models max_model_len"
[ "$(curl -s -o /dev/null -w '%{http_code}' -d '{"nothing":1}' "$(url /tokenize)")" = 400 ] || fail "/tokenize without text is not 400"

# the trained model's answers
if [ $trained = 1 ]; then
        [ "$ok_answer" = OK ] || fail "'Reply with exactly: OK' gave '$ok_answer'"
        a=$(chat '{"messages":[{"role":"user","content":"What is 17 * 19?"}],"temperature":0,"max_tokens":32}' | jget '["choices"][0]["message"]["content"]')
        [ "$a" = 323 ] || fail "17 * 19 gave '$a'"
        chat '{"messages":[{"role":"user","content":"What is 17 * 19?"}],"temperature":0,"max_tokens":200,"chat_template_kwargs":{"enable_thinking":true}}' >"$tmp/think"
        [ "$(jget '["choices"][0]["message"]["content"]' <"$tmp/think")" = 323 ] || fail "thinking answer: $(cat "$tmp/think")"
        [ -n "$(jget '["choices"][0]["message"]["reasoning_content"] or ""' <"$tmp/think")" ] || fail "no reasoning_content"
else
        echo "note: skipping the answer checks (OK, 323, reasoning): no trained model"
fi
stop
[ $? -eq 0 ] || fail "SIGTERM should end the server with status 0"

# ---- faults
# slow load: 503 while loading, then ready
start slow --slow-load 1 || fail "slow: did not start"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$(url /health)")" = 503 ] || fail "/health is not 503 while loading"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$(url /v1/models)")" = 503 ] || fail "/v1/models is not 503 while loading"
wait_ready || fail "slow: never ready"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$(url /health)")" = 200 ] || fail "slow: /health not 200 after load"
stop

# hang at load: 503 for good, and SIGTERM still ends it
start hang --hang-at-load || fail "hang: did not start"
sleep 0.3
[ "$(curl -s -o /dev/null -w '%{http_code}' "$(url /health)")" = 503 ] || fail "hang: /health is not 503"
grep -q "listening on" "$log" && fail "hang: printed the ready line"
stop

# die after 2 requests: the third finds no server
start die --die-after-requests 2 || fail "die: did not start"
wait_ready || fail "die: never ready"
for i in 1 2; do
        chat '{"messages":[{"role":"user","content":"hi"}],"max_tokens":4}' >/dev/null
        [ "$(cat "$tmp/status")" = 200 ] || fail "die: request $i failed before the limit"
done
wait "$pid"
st=$?
[ $st -eq 134 ] || fail "die: expected death by SIGABRT (134), got $st"
grep -q "aborting after 2 completed requests" "$log" || fail "die: no message"

# HTTP 500 on generation, /health still fine
start e500 --http-500 || fail "500: did not start"
wait_ready || fail "500: never ready"
chat '{"messages":[{"role":"user","content":"hi"}]}' >"$tmp/e"
[ "$(cat "$tmp/status")" = 500 ] || fail "--http-500 gave $(cat "$tmp/status")"
[ "$(jget '["error"]["code"]' <"$tmp/e")" = 500 ] || fail "500 body: $(cat "$tmp/e")"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$(url /health)")" = 200 ] || fail "500: /health"
stop

# malformed SSE: an event whose JSON does not parse
start malformed --malformed-sse || fail "malformed: did not start"
wait_ready || fail "malformed: never ready"
curl -sN --max-time 20 -d '{"messages":[{"role":"user","content":"hi"}],"max_tokens":8,"stream":true}' "$(url /v1/chat/completions)" >"$tmp/ms"
python3 - "$tmp/ms" <<'EOF' || fail "malformed: $(cat "$tmp/ms")"
import sys, json
bad = 0
for l in open(sys.argv[1]).read().split("\n"):
    if l.startswith("data: ") and l != "data: [DONE]":
        try:
            json.loads(l[6:])
        except ValueError:
            bad += 1
assert bad >= 1
EOF
stop

# stall mid-stream: a few chunks, then silence (the client gives up), no [DONE]
start stall --stall-mid-stream || fail "stall: did not start"
wait_ready || fail "stall: never ready"
curl -sN --max-time 2 -d '{"messages":[{"role":"user","content":"hi"}],"max_tokens":50,"ignore_eos":true,"stream":true}' "$(url /v1/chat/completions)" >"$tmp/stall"
[ $? -eq 28 ] || fail "stall: the stream did not hang"
n=$(grep -c '^data: {' "$tmp/stall")
[ "$n" -ge 2 ] && [ "$n" -le 5 ] || fail "stall: $n events before the stall"
grep -q DONE "$tmp/stall" && fail "stall: [DONE] sent"
stop # wakes the stalled connection thread: must still exit promptly

# close mid-stream: a few chunks, then the connection is cut
start close --close-mid-stream || fail "close: did not start"
wait_ready || fail "close: never ready"
curl -sN --max-time 10 -d '{"messages":[{"role":"user","content":"hi"}],"max_tokens":50,"ignore_eos":true,"stream":true}' "$(url /v1/chat/completions)" >"$tmp/close"
st=$?
[ $st -ne 0 ] && [ $st -ne 28 ] || fail "close: curl status $st (expected a transfer error)"
grep -q DONE "$tmp/close" && fail "close: [DONE] sent"
grep -q '^data: {' "$tmp/close" || fail "close: no chunk before the cut"
stop

# wrong answers: one prompt in N (FNV-1a 64 of the user's text, 0 mod N) gets the first
# digit of its answer changed, the same streamed or not; the others are untouched
if [ "$trained" = 1 ]; then
        start wrong --wrong-answers 3 || fail "wrong: did not start"
        wait_ready || fail "wrong: never ready"
        picked=0
        for ab in "17 19" "45 44" "47 83" "25 62" "12 12" "33 71" "90 18"; do
                set -- $ab
                prompt="What is $1 * $2?"
                want=$(python3 -c '
import sys
h = 0xcbf29ce484222325
for b in sys.argv[1].encode():
    h = ((h ^ b) * 0x100000001b3) & (2**64 - 1)
a = sys.argv[2]
print(str((int(a[0]) + 1) % 10) + a[1:] if h % 3 == 0 else a)' "$prompt" $(($1 * $2)))
                [ "$want" != $(($1 * $2)) ] && picked=$((picked + 1))
                body="{\"messages\":[{\"role\":\"user\",\"content\":\"$prompt\"}],\"temperature\":0,\"max_tokens\":16"
                got=$(chat "$body}" | jget '["choices"][0]["message"]["content"]')
                [ "$got" = "$want" ] || fail "wrong: '$prompt' gave '$got', want '$want'"
                streamed=$(curl -sN --max-time 20 -d "$body,\"stream\":true}" "$(url /v1/chat/completions)" | python3 -c '
import sys, json
out = ""
for l in sys.stdin:
    if l.startswith("data: {"):
        for c in json.loads(l[6:]).get("choices", []):
            out += c.get("delta", {}).get("content") or ""
print(out)')
                [ "$streamed" = "$want" ] || fail "wrong: '$prompt' streamed '$streamed', want '$want'"
        done
        [ "$picked" -ge 1 ] && [ "$picked" -le 5 ] || fail "wrong: $picked of 7 prompts picked"
        stop
fi

# ---- backends
# sm_100-only kernels on sm_120: torch's message, exit 1
"$TESTBED" --model "$model" --port 0 --moe-backend tcgen05 --device-arch sm_120 >"$tmp/arch.log" 2>&1
st=$?
[ $st -eq 1 ] || fail "tcgen05 on sm_120: status $st"
grep -q '^RuntimeError: CUDA error: no kernel image is available for execution on the device$' "$tmp/arch.log" ||
        fail "tcgen05 on sm_120: $(cat "$tmp/arch.log")"
# ... and it serves on sm_100
start tcgen05 --moe-backend tcgen05 --gemm-backend tcgen05 --device-arch sm_100 || fail "tcgen05: did not start"
wait_ready || fail "tcgen05 on sm_100 should serve"
chat '{"messages":[{"role":"user","content":"hi"}],"max_tokens":4}' >/dev/null
[ "$(cat "$tmp/status")" = 200 ] || fail "tcgen05 on sm_100: $(cat "$tmp/status")"
stop

# the shuffled load path over the budget: the allocation failure, then SIGKILL
"$TESTBED" --model "$model" --port 0 --moe-backend shuffled --mem-budget 24M >"$tmp/oom.log" 2>&1
st=$?
[ $st -eq 137 ] || fail "shuffled over budget: expected SIGKILL (137), got $st"
grep -Eq '^gauntlet-testbed: failed to allocate [0-9]+ bytes for shuffled expert weights: out of memory \(budget 25165824\)$' "$tmp/oom.log" ||
        fail "oom message: $(cat "$tmp/oom.log")"
# ... while the plain fp32 path fits the same budget
start budget --moe-backend reference --mem-budget 24M || fail "budget: did not start"
wait_ready || fail "reference within 24M should serve: $(cat "$log")"
stop

# the answers per backend on the trained model: right on the correct paths, wrong on sm_120's auto
if [ $trained = 1 ]; then
        for cfg in "reference reference sm_90" "nvfp4 nvfp4 sm_120" "shuffled reference sm_90"; do
                set -- $cfg
                start "ans-$1-$3" --moe-backend "$1" --gemm-backend "$2" --device-arch "$3" || fail "$cfg: did not start"
                wait_ready || fail "$cfg: never ready"
                a=$(chat '{"messages":[{"role":"user","content":"What is 17 * 19?"}],"temperature":0,"max_tokens":32}' | jget '["choices"][0]["message"]["content"]')
                [ "$a" = 323 ] || fail "$cfg: 17 * 19 gave '$a'"
                stop
        done
        # W4A4 on sm_100 (activations in FP4 too): the model was trained with it in the mix
        # (model-eval.json nvfp4_w4a4_pair_acc 1.0) and the swizzled scales are read right there
        start w4a4 --moe-backend nvfp4-swizzled --device-arch sm_100 || fail "w4a4: did not start"
        wait_ready || fail "w4a4: never ready"
        a=$(chat '{"messages":[{"role":"user","content":"What is 17 * 19?"}],"temperature":0,"max_tokens":32}' | jget '["choices"][0]["message"]["content"]')
        [ "$a" = 323 ] || fail "nvfp4-swizzled on sm_100 (W4A4): 17 * 19 gave '$a'"
        stop
        start auto120 --device-arch sm_120 || fail "auto on sm_120: did not start"
        wait_ready || fail "auto on sm_120: never ready"
        grep -q "Using nvfp4-swizzled MoE backend" "$log" || fail "auto on sm_120 did not pick nvfp4-swizzled"
        a=$(chat '{"messages":[{"role":"user","content":"What is 17 * 19?"}],"temperature":0,"max_tokens":32}' | jget '["choices"][0]["message"]["content"]')
        [ "$a" != 323 ] || fail "auto on sm_120 answered 323: the scale-layout mismatch did nothing"
        echo "auto on sm_120 answers: $a"
        stop
fi

# nothing left behind
for p in "${pids[@]}"; do
        kill -0 "$p" 2>/dev/null && fail "process $p still running"
done
echo "testbed: all checks passed"
exit 0

#!/usr/bin/env bash
# tier: engine (tests/run engine)
# llamacpp-sessions.sh -- multi_turn sessions and a Mooncake trace against the real
# llama-server with the trained testbed model (skipped, by name, without one; see
# llamacpp.sh): every turn completes, each turn's prompt (the server's usage.prompt_tokens)
# holds the previous turn's prompt and answer, so the server's answers were sent back; the
# trace replays at its times within the measured send delay. The figures in docs/bench.md
# "Workloads" come from this script (FIGURES=1 prints them).
. "$SRCDIR/tests/lib.sh"
need_llama_server
MODEL=$SRCDIR/testbed/model.gguf
[ -f "$MODEL" ] || { echo "SKIP: no trained testbed model ($MODEL)"; exit 77; }
start_llama_server ls -t 2 -np 4 --reasoning-format none

# 8 sessions of 4 turns, 32-token user turns, 24-token answers, 50 ms think time, 4 at a time
"$GAUNTLET" bench --url "$url" --engine llama.cpp --dataset-name multi_turn --num-prompts 8 \
        --multi-turn-turns 4 --multi-turn-input-len 32 --multi-turn-output-len 24 --multi-turn-think-time 50ms \
        --concurrency 4 --samples "$tmp/mt.samples" --format json >"$tmp/mt.json" || fail "multi_turn bench"
jq -e '.bench[0] | .completed == 32 and .failed == 0 and .sessions.completed == 8 and .sessions.turns == 32' \
        "$tmp/mt.json" >/dev/null || fail "multi_turn: $(jq -c '.bench[0] | {completed, failed, sessions, first_error}' "$tmp/mt.json")"
# turn k+1's prompt, by the server's count, is turn k's prompt, its answer and 32 more tokens
jq -e 'group_by(.session) | all(sort_by(.turn) | . as $t
        | [range(1; length) | $t[.].prompt_tokens >= $t[. - 1].prompt_tokens + $t[. - 1].output_tokens + 32 - 2] | all)' \
        "$tmp/mt.samples" >/dev/null || fail "turns do not carry the answers: $(jq -c '[.[] | [.session, .turn, .prompt_tokens, .output_tokens]]' "$tmp/mt.samples")"

# a trace of 16 lines over 4 s, in pairs sharing their first two 32-token blocks, light
# enough for a CPU server: its requests go out on time (the cap is never reached)
python3 - "$tmp/trace.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(16):
        g = i // 2
        f.write(json.dumps({"timestamp": i * 250, "input_length": 96, "output_length": 8,
                            "hash_ids": [1000 + g, 2000 + g, 3000 + i]}) + "\n")
PY
"$GAUNTLET" bench --url "$url" --engine llama.cpp --dataset-name trace --dataset-path "$tmp/trace.jsonl" \
        --trace-block-size 32 --concurrency 16 --samples "$tmp/tr.samples" --format json >"$tmp/tr.json" || fail "trace bench"
jq -e '.bench[0] | .completed == 16 and .failed == 0 and .workload.arrivals == "trace"
        and .workload.input_tokens.as == "asked, sized" and .send_delay_ms.p50 < 50' "$tmp/tr.json" >/dev/null \
        || fail "trace: $(jq -c '.bench[0] | {completed, failed, workload, first_error}' "$tmp/tr.json")"
jq -e 'sort_by(.scheduled_ms) | [.[].scheduled_ms] == [range(0; 16) | . * 250]' "$tmp/tr.samples" >/dev/null \
        || fail "trace times: $(jq -c '[.[].scheduled_ms] | sort' "$tmp/tr.samples")"
# lengths in the server's tokens: 96 asked, the template's few on top
jq -e 'all(.prompt_tokens >= 94 and .prompt_tokens <= 96 + 12)' "$tmp/tr.samples" >/dev/null \
        || fail "trace prompt lengths: $(jq -c '[.[].prompt_tokens]' "$tmp/tr.samples")"

if [ -n "${FIGURES:-}" ]; then
        jq -c '.bench[0] | {completed, ttft_p50: .ttft_ms.p50, ttft_p99: .ttft_ms.p99, tpot_p50: .tpot_ms.p50,
                send_delay_p99: .send_delay_ms.p99, sessions, workload: .workload.multi_turn}' "$tmp/mt.json"
        jq -r 'group_by(.turn)[] | "turn \(.[0].turn): prompt_tokens \([.[].prompt_tokens] | add / length) ttft_ms p50 \(
                [.[].ttft_ms] | sort | .[length / 2 | floor])"' "$tmp/mt.samples"
        jq -c '.bench[0] | {completed, ttft_p50: .ttft_ms.p50, ttft_p99: .ttft_ms.p99, send_delay_p50: .send_delay_ms.p50,
                send_delay_p99: .send_delay_ms.p99, send_delay_max: .send_delay_ms.max,
                calibration: .prompt_calibration, trace: .workload.trace}' "$tmp/tr.json"
        jq -r 'group_by(.request_id | split("-") | .[2] | tonumber % 2)[] | "pair member \(.[0].request_id | split("-") | .[2] | tonumber % 2): ttft_ms p50 \([.[].ttft_ms] | sort | .[length / 2 | floor])"' "$tmp/tr.samples"
fi
echo "llamacpp-sessions: ok"

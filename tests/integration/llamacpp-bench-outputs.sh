#!/usr/bin/env bash
# tier: engine (tests/run engine)
# llamacpp-bench-outputs.sh -- the forced detectors on the real llama-server's bench outputs
# (issue #31 item 2; skipped, by name, without one): every completed request's output is
# judged and none is flagged, with random prompts through chat (two levels) and completions
# (lengths spread), a ShareGPT-like file, and long outputs, all forced to their length with
# ignore_eos; the verdict is pass. The figures of a longer run are in docs/metrics.md ("The
# bench's own outputs").
. "$SRCDIR/tests/lib.sh"
need_llama_server
command -v jq >/dev/null || fail "jq is needed"
python3 "$SRCDIR/tools/sharegpt-words.py" 60 "$tmp/sg.json"
# 4 slots of 256 cells (the testbed model's training context)
start_llama_server ls -np 4 -c 1024 -t 2
judged=0
bench() { # name args...
        local name=$1
        shift
        "$GAUNTLET" bench --url "$url" --engine llama.cpp --format json "$@" >"$tmp/$name.json" 2>"$tmp/$name.err" ||
                { cat "$tmp/$name.err"; fail "$name: bench failed or flagged: $(jq -c '[.verdict, .evidence]' "$tmp/$name.json")"; }
        jq -e '.verdict == "pass" and ([.bench[] | select(.outputs_flagged != 0 or .outputs_judged != .completed
               or .completed == 0)] | length == 0)' "$tmp/$name.json" >/dev/null ||
                fail "$name: $(jq -c '[.verdict, (.bench[] | {completed, outputs_judged, outputs_flagged, flagged})]' "$tmp/$name.json")"
        judged=$((judged + $(jq '[.bench[].outputs_judged] | add' "$tmp/$name.json")))
}
bench chat --concurrency 1,4 --requests 40 --input-tokens 64 --output-tokens 128
bench completion --endpoint completion --concurrency 4 --requests 40 --input-tokens 32 --output-tokens 150 \
        --random-range-ratio 0.3
bench sharegpt --dataset-name sharegpt --dataset-path "$tmp/sg.json" --num-prompts 60 --sharegpt-min-len 1 \
        --concurrency 4 --requests 60
bench long --concurrency 4 --requests 8 --input-tokens 16 --output-tokens 220
# forced (ignore_eos): every request ran to about the tokens asked, far past the model's own end
jq -e '.bench[0].output_tokens_per_request.min >= 200' "$tmp/long.json" >/dev/null ||
        fail "long: not forced: $(jq -c '.bench[0].output_tokens_per_request' "$tmp/long.json")"
kill "$ls_pid"; wait "$ls_pid" 2>/dev/null || true
echo "llamacpp-bench-outputs: $judged outputs judged, 0 flagged"

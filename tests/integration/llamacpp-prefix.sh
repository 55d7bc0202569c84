#!/usr/bin/env bash
# llamacpp-prefix.sh -- issue #25's measure on the real llama-server (skipped, by name,
# without one): with --metrics and its prompt cache on, a prefix_repetition workload has a
# lower TTFT p50 than random prompts of the same total length, and the server's own figures
# are in the level: /metrics (llamacpp: running peak, prompt tokens processed) and its
# timings (prompt tokens taken from the cache). docs/bench.md "The server's own figures".
. "$SRCDIR/tests/lib.sh"
need_llama_server
command -v jq >/dev/null || fail "jq is needed"
"$LLAMA_SERVER" -m "$SRCDIR/testbed/model.gguf" --host 127.0.0.1 --port 0 -t 2 --metrics -np 4 -c 1024 \
        >"$tmp/ls.log" 2>&1 &
ls_pid=$!
echo "$ls_pid" >"$tmp/pids-ls"
url=
for _ in $(seq 300); do
        url=$(grep -o 'listening on http://[0-9.]*:[0-9]*' "$tmp/ls.log" | head -1 | cut -d' ' -f3 || true)
        [ -n "$url" ] && curl -sf "$url/health" >/dev/null 2>&1 && break
        kill -0 "$ls_pid" 2>/dev/null || { cat "$tmp/ls.log"; fail "llama-server died at start"; }
        sleep 0.1
done
[ -n "$url" ] || { tail "$tmp/ls.log"; fail "llama-server did not come up"; }
common=(--url "$url" --engine llama.cpp --concurrency 4 --requests 24 --warmup 4 --num-prompts 24 --seed 1
        --format json)
"$GAUNTLET" bench "${common[@]}" --dataset-name prefix_repetition --prefix-repetition-prefix-len 192 \
        --prefix-repetition-suffix-len 32 --prefix-repetition-num-prefixes 4 --prefix-repetition-output-len 8 \
        >"$tmp/prefix.json" || fail "prefix_repetition bench failed"
"$GAUNTLET" bench "${common[@]}" --dataset-name random --random-input-len 224 --random-output-len 8 \
        >"$tmp/random.json" || fail "random bench failed"
show() { jq -c '.bench[0] | {ttft: .ttft_ms.p50, prompt: .prompt_tokens_per_request.mean, server_timings,
                           m: (.server_metrics | {engine, running_peak, prompt_tokens, kv_cache_usage_peak})}' "$1"; }
echo "prefix_repetition: $(show "$tmp/prefix.json")"
echo "random:            $(show "$tmp/random.json")"
p=$(jq '.bench[0].ttft_ms.p50' "$tmp/prefix.json")
r=$(jq '.bench[0].ttft_ms.p50' "$tmp/random.json")
# the same total prompt length, within a few tokens
jq -en --slurpfile a "$tmp/prefix.json" --slurpfile b "$tmp/random.json" \
        '($a[0].bench[0].prompt_tokens_per_request.mean - $b[0].bench[0].prompt_tokens_per_request.mean) | fabs < 8' \
        >/dev/null || fail "prompt lengths differ"
jq -en --argjson p "$p" --argjson r "$r" '$p < $r' >/dev/null || fail "shared prefix TTFT p50 $p ms, not below random's $r ms"
jq -e '.bench[0] | .server_timings.prefix_cache_hit_rate > 0.5 and .server_metrics.engine == "llamacpp"
       and .server_metrics.running_peak >= 1 and .server_metrics.prompt_tokens > 0' "$tmp/prefix.json" >/dev/null ||
        fail "prefix: the server's figures: $(show "$tmp/prefix.json")"
jq -e '.bench[0] | .server_timings.prefix_cache_hit_rate < 0.3 and .server_metrics.prompt_tokens > 0' \
        "$tmp/random.json" >/dev/null || fail "random: the server's figures: $(show "$tmp/random.json")"
# more prompt tokens processed for the random prompts than for the shared ones
jq -en --slurpfile a "$tmp/prefix.json" --slurpfile b "$tmp/random.json" \
        '$a[0].bench[0].server_metrics.prompt_tokens < $b[0].bench[0].server_metrics.prompt_tokens' >/dev/null ||
        fail "the server processed no fewer prompt tokens with shared prefixes"
kill "$ls_pid"; wait "$ls_pid" 2>/dev/null || true
echo "llamacpp-prefix: all good"

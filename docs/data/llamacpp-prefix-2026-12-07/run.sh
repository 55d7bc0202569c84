#!/usr/bin/env bash
# run.sh RUNS REQUESTS INPUT_LEN OUTPUT_LEN -- the unified-cache level of
# tests/integration/llamacpp-prefix.sh, RUNS times, each on a fresh llama-server without -np
# (four slots sharing one cache of 256 cells), --kv-cache-layout unified. One line a run:
# [KV-cache usage peak, running peak, /slots scrapes, the level's seconds].
# From the checkout's root, after make and with LLAMA_SERVER=$(tools/build-llamacpp.sh).
set -euo pipefail
runs=$1 reqs=$2 inlen=$3 outlen=$4
: "${LLAMA_SERVER:?LLAMA_SERVER names a llama-server}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for i in $(seq "$runs"); do
        "$LLAMA_SERVER" -m testbed/model.gguf --host 127.0.0.1 --port 0 -t 2 --metrics -c 256 \
                >"$tmp/ls.log" 2>&1 &
        pid=$!
        url=
        for _ in $(seq 200); do
                url=$(grep -o 'listening on http://[0-9.]*:[0-9]*' "$tmp/ls.log" | head -n 1 | cut -d' ' -f3 || true)
                [ -n "$url" ] && curl -sf "$url/health" >/dev/null && break
                sleep 0.1
        done
        build/bin/gauntlet bench --url "$url" --engine llama.cpp --concurrency 4 --requests "$reqs" \
                --warmup 4 --num-prompts $((reqs + 4)) --seed "$i" --format json --dataset-name random \
                --random-input-len "$inlen" --random-output-len "$outlen" --kv-cache-layout unified \
                >"$tmp/o.json" 2>/dev/null
        jq -c '.bench[0] | [.server_metrics.kv_cache_usage_peak, .server_metrics.running_peak,
                            .server_metrics.slots_scrapes, .duration_s]' "$tmp/o.json"
        kill "$pid"
        wait "$pid" 2>/dev/null || true
done

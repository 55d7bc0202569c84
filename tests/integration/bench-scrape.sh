#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# bench-scrape.sh -- the server's own metrics (issue #25 item 6) and vLLM's names (item 7):
# a fixture server whose /metrics is a vLLM-shaped page (its counters grow with the requests,
# hostile text in a label and a junk line in it) and one without /metrics, swept side by
# side. The first's figures are in the level JSON and in the text, Markdown and HTML
# reports, escaped; the second says once that it has none. `gauntlet bench --format json`
# carries vLLM's flat names; --no-server-metrics and bench.server_metrics: false scrape
# nothing; --goodput takes vLLM's form and a bad one is one line. A llama.cpp-shaped server
# (no KV series on /metrics) gets its KV-cache figure from GET /slots: taken from a page of
# slots, named as such, a broken page counted and skipped, none said once; divided by the
# slots' contexts summed unless told the cache is unified (--kv-cache-layout, or in a sweep
# the server log's "initializing, ... kv_unified = 'true'" line).
. "$SRCDIR/tests/lib.sh"
command -v jq >/dev/null || fail "jq is needed"

cat >"$tmp/metrics.txt" <<'PROM'
# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine="0",model_name="<script>alert(1)</script>\"|`x`"} 0.42
vllm:num_requests_running{model_name="m"} 3
vllm:num_requests_waiting{model_name="m"} 1
vllm:prefix_cache_queries_total{model_name="m"} {requests}00
vllm:prefix_cache_hits_total{model_name="m"} {requests}0
vllm:num_preemptions_total{model_name="m"} {requests}
<script>alert(2)</script> junk
vllm:num_requests_running{model_name="m"} 99
PROM
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-{port}", --token-delay-ms, "2"]
startup_timeout: 10s
stop_timeout: 2s
axes:
  metrics:
    values:
      - {name: vllm, args: [--metrics-file, "$tmp/metrics.txt"]}
      - {name: none, args: []}
bench: {concurrency: [1, 2], output_tokens: 8, requests: 6, warmup: 0}
objective: output_tokens_per_s@1
YAML
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "run failed"; }
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json"
level() { jq -c --arg c "$1" --argjson n "$2" '.cells[] | select(.axes.metrics == $c) | .bench[] | select(.concurrency == $n)' "$tmp/r.json"; }
for n in 1 2; do
        sm=$(level vllm "$n" | jq -c .server_metrics)
        # peaks as the page says (the duplicate series ignored); counters grew with the
        # level's requests and checks: hits are a tenth of the queries
        jq -e '.engine == "vllm" and .kv_cache_usage_peak == 0.42 and .running_peak == 3 and .waiting_peak == 1
               and .prefix_cache_hit_rate == 0.1 and .prefix_cache_hit_rate_from == "counters"
               and .preemptions >= 6 and .prefix_cache_queries == 100 * .preemptions and .scrapes >= 2
               and .skipped_lines >= 2 and .duplicate_series >= 2' <<<"$sm" >/dev/null ||
                fail "vllm@$n: server_metrics $sm"
        l=$(level none "$n")
        jq -e 'has("server_metrics") | not' <<<"$l" >/dev/null || fail "none@$n: $(jq -c .server_metrics <<<"$l")"
        # vLLM's flat names, and what they mean
        for k in completed failed request_throughput output_throughput total_token_throughput \
                mean_ttft_ms median_ttft_ms std_ttft_ms p99_ttft_ms mean_tpot_ms median_tpot_ms std_tpot_ms \
                p99_tpot_ms mean_itl_ms median_itl_ms std_itl_ms p99_itl_ms mean_e2el_ms median_e2el_ms \
                std_e2el_ms p99_e2el_ms; do
                jq -e --arg k "$k" '.[$k] | type == "number"' <<<"$l" >/dev/null || fail "none@$n: no number '$k'"
        done
        jq -e '.request_throughput == .requests_per_s and .output_throughput == .output_tokens_per_s
               and .median_ttft_ms == .ttft_ms.p50 and .p99_e2el_ms == .e2e_ms.p99 and .completed == 6' \
                <<<"$l" >/dev/null || fail "none@$n: vLLM's names disagree with gauntlet's"
done
# the server without /metrics says so once, in its first level
said=$(jq '[.cells[] | select(.axes.metrics == "none") | .bench[].warnings[] | select(test("no server metrics"))]' "$tmp/r.json")
[ "$(jq length <<<"$said")" = 1 ] || fail "want one 'no server metrics' warning, got $said"
jq -e '.[0] == "no server metrics: GET /metrics answered HTTP 404"' <<<"$said" >/dev/null || fail "said $said"
jq -e '[.cells[] | select(.axes.metrics == "vllm") | .bench[].warnings[] | select(test("server metrics"))] | length == 0' \
        "$tmp/r.json" >/dev/null || fail "the server with /metrics was said to have none"

# every report shows the figures beside the client's, and nothing of the page's text
"$GAUNTLET" report "$tmp/j.db" >"$tmp/r.txt"
"$GAUNTLET" report --format markdown "$tmp/j.db" >"$tmp/r.md"
"$GAUNTLET" report --format html "$tmp/j.db" >"$tmp/r.html"
want="KV cache peak 42.0%, running peak 3, waiting peak 1, prefix cache hits 10.0%, preemptions"
for f in r.txt r.md r.html; do
        grep -qF "$want" "$tmp/$f" || fail "$f has not the server's figures: $(grep -i 'server' "$tmp/$f" | head -3)"
        ! grep -q "alert" "$tmp/$f" || fail "$f carries the page's text"
done
grep -qF "the server's own figures: @1 $want" "$tmp/r.txt" || fail "text: $(grep -F "own figures" "$tmp/r.txt")"

# gauntlet bench: the same against one server, text and JSON; off with --no-server-metrics
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$FIXTURE" --port "$port" --metrics-file "$tmp/metrics.txt" --pid-file "$tmp/pids-bench" >"$tmp/fx.log" 2>&1 &
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.05; done
url="http://127.0.0.1:$port"
"$GAUNTLET" bench --url "$url" --concurrency 2 --requests 4 --output-tokens 8 --no-calibrate >"$tmp/b.txt"
grep -qF "server: concurrency 2: $want" "$tmp/b.txt" || fail "bench text: $(cat "$tmp/b.txt")"
"$GAUNTLET" bench --url "$url" --concurrency 2 --requests 4 --output-tokens 8 --no-calibrate --format json \
        --goodput "ttft:60000 tpot:60000 e2el:60000" >"$tmp/b.json"
jq -e '.bench[0] | .server_metrics.kv_cache_usage_peak == 0.42 and .completed == 4 and .failed == 0
       and (.p99_ttft_ms | type) == "number" and .goodput.slo_e2el_ms == 60000 and .goodput.good == 4' \
        "$tmp/b.json" >/dev/null || fail "bench json: $(jq -c '.bench[0] | {server_metrics, goodput}' "$tmp/b.json")"
"$GAUNTLET" bench --url "$url" --concurrency 1 --requests 2 --output-tokens 4 --no-calibrate --format json \
        --no-server-metrics >"$tmp/off.json"
jq -e '.bench[0] | has("server_metrics") | not' "$tmp/off.json" >/dev/null || fail "--no-server-metrics scraped"
# a level of at least 1.6 s (6 requests one after the other, each 7 events 40 ms apart) is
# scraped during it at 0.1, 0.3, 0.7 and 1.5 s, beside before and after: 6 (one may be
# skipped while the one before is still in flight on a loaded machine); at a fixed second
# it would be 3 or 4
sport=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$FIXTURE" --port "$sport" --token-delay-ms 40 --metrics-file "$tmp/metrics.txt" --pid-file "$tmp/pids-slow" \
        >"$tmp/fx-slow.log" 2>&1 &
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$sport/health" >/dev/null && break; sleep 0.05; done
"$GAUNTLET" bench --url "http://127.0.0.1:$sport" --concurrency 1 --requests 6 --warmup 0 \
        --output-tokens 20 --no-calibrate --format json >"$tmp/slow.json" || fail "bench (slow) failed"
jq -e '.bench[0] | .duration_s >= 1.6 and .server_metrics.scrapes >= 5' "$tmp/slow.json" >/dev/null ||
        fail "a 1.6 s level's scrapes: $(jq -c '.bench[0] | {duration_s, scrapes: .server_metrics.scrapes}' "$tmp/slow.json")"
if "$GAUNTLET" bench --url "$url" --requests 1 --output-tokens 4 --goodput "ttft:fast" 2>"$tmp/err"; then
        fail "a bad --goodput was taken"
fi
[ "$(wc -l <"$tmp/err")" -le 2 ] && grep -q "^gauntlet: invalid --goodput: 'ttft:fast'" "$tmp/err" || fail "bad goodput: $(cat "$tmp/err")"

# llama.cpp: /metrics without a KV series, the estimate from GET /slots (as llama-server
# writes it: a slot that served a task, one never used; hostile text in a string)
cat >"$tmp/llama.txt" <<'PROM'
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total {requests}0
llamacpp:requests_processing 2
llamacpp:requests_deferred 0
PROM
cat >"$tmp/slots.json" <<'JSON'
[{"id":0,"n_ctx":512,"speculative":false,"is_processing":true,"id_task":7,"n_prompt_tokens":384,
  "n_prompt_tokens_processed":64,"n_prompt_tokens_cache":320,"params":{"n_predict":8,"stop":["<script>alert(3)</script>"]},
  "next_token":[{"has_next_token":true,"has_new_line":false,"n_remain":4,"n_decoded":4}]},
 {"id":1,"n_ctx":512,"speculative":false,"is_processing":false}]
JSON
printf '[{"id":0,"n_ctx":512,"n_prompt_tokens":9999}]' >"$tmp/slots-bad.json"
slots_bench() { # NAME FIXTURE-ARGS...: one bench against a fixture, its JSON in $tmp/out-NAME.json
        local name=$1 port
        shift
        port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
        "$FIXTURE" --port "$port" --metrics-file "$tmp/llama.txt" --pid-file "$tmp/pids-$name" "$@" >"$tmp/fx-$name.log" 2>&1 &
        for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.05; done
        "$GAUNTLET" bench --url "http://127.0.0.1:$port" --concurrency 1,2 --requests 4 --output-tokens 8 \
                --no-calibrate --format json ${bench_args[@]+"${bench_args[@]}"} >"$tmp/out-$name.json" ||
                fail "bench ($name) failed"
        [ "$name" != slots ] || "$GAUNTLET" bench --url "http://127.0.0.1:$port" --concurrency 2 --requests 2 \
                --output-tokens 4 --no-calibrate >"$tmp/out-slots.txt" || fail "bench (text) failed"
        kill "$(cat "$tmp/pids-$name")" 2>/dev/null || true
}
bench_args=()
slots_bench slots --slots-file "$tmp/slots.json"
for i in 0 1; do
        sm=$(jq -c ".bench[$i].server_metrics" "$tmp/out-slots.json")
        # 384 cells held of 2 x 512: not told the layout, as split
        jq -e '.engine == "llamacpp" and .kv_cache_usage_peak == 0.375 and .kv_cache_source == "slots"
               and .kv_cache_layout == "unknown" and .kv_cache_capped_pages == 0
               and .slots_scrapes >= 2 and .failed_slots_scrapes == 0
               and .skipped_slots_pages == 0 and .running_peak == 2' <<<"$sm" >/dev/null || fail "slots@$i: $sm"
done
# told: split the same; unified, 384 of the one cache of 512 (each slot's n_ctx is all of it)
bench_args=(--kv-cache-layout split)
slots_bench split --slots-file "$tmp/slots.json"
jq -e 'all(.bench[].server_metrics; .kv_cache_usage_peak == 0.375 and .kv_cache_layout == "split")' \
        "$tmp/out-split.json" >/dev/null || fail "split: $(jq -c '[.bench[].server_metrics]' "$tmp/out-split.json")"
bench_args=(--kv-cache-layout unified)
slots_bench unified --slots-file "$tmp/slots.json"
jq -e 'all(.bench[].server_metrics; .kv_cache_usage_peak == 0.75 and .kv_cache_layout == "unified"
       and .kv_cache_source == "slots" and .kv_cache_capped_pages == 0)' "$tmp/out-unified.json" >/dev/null ||
        fail "unified: $(jq -c '[.bench[].server_metrics]' "$tmp/out-unified.json")"
# unified, and the slots hold more than one cache (idle slots' prompts evicted since): 1, counted
cat >"$tmp/slots-over.json" <<'JSON'
[{"id":0,"n_ctx":512,"n_prompt_tokens":384},{"id":1,"n_ctx":512,"n_prompt_tokens":300}]
JSON
slots_bench over --slots-file "$tmp/slots-over.json"
jq -e 'all(.bench[].server_metrics; .kv_cache_usage_peak == 1 and .kv_cache_layout == "unified"
       and .kv_cache_capped_pages == .slots_scrapes and .slots_scrapes >= 2)' "$tmp/out-over.json" >/dev/null ||
        fail "unified over: $(jq -c '[.bench[].server_metrics]' "$tmp/out-over.json")"
bench_args=()
for bad in both "" Unified; do
        "$GAUNTLET" bench --url http://127.0.0.1:1 --concurrency 1 --requests 1 --output-tokens 1 \
                --kv-cache-layout "$bad" >"$tmp/bad.out" 2>"$tmp/bad.err" && fail "--kv-cache-layout '$bad' taken"
        head -n1 "$tmp/bad.err" | grep -xF "gauntlet: invalid --kv-cache-layout '$bad' (unified or split)" >/dev/null ||
                fail "--kv-cache-layout '$bad': $(cat "$tmp/bad.err")"
done
jq -e '[.bench[].warnings[] | select(test("server metrics"))] | length == 0' "$tmp/out-slots.json" >/dev/null ||
        fail "slots: a warning: $(jq -c '[.bench[].warnings]' "$tmp/out-slots.json")"
! grep -q alert "$tmp/out-slots.json" || fail "the /slots page's text is in the output"
grep -qF "server: concurrency 2: KV cache peak 37.5%, running peak 2" "$tmp/out-slots.txt" ||
        fail "bench text: $(grep server: "$tmp/out-slots.txt")"
# a page that is no server's slots (more cells held than it has): skipped and counted
slots_bench bad --slots-file "$tmp/slots-bad.json"
jq -e '.bench[0].server_metrics | .kv_cache_usage_peak == null and .kv_cache_source == null
       and .slots_scrapes == 0 and .skipped_slots_pages >= 2 and .failed_slots_scrapes == 0' "$tmp/out-bad.json" \
        >/dev/null || fail "bad slots: $(jq -c '.bench[0].server_metrics' "$tmp/out-bad.json")"
# no /slots (llama-server --no-slots answers 501, the fixture 404): none, said once, and not
# asked again
slots_bench noslots
said=$(jq -c '[.bench[].warnings[] | select(test("server metrics"))]' "$tmp/out-noslots.json")
jq -e '. == ["no server metrics: KV-cache usage (llama.cpp'"'"'s GET /slots answered HTTP 404)"]' <<<"$said" \
        >/dev/null || fail "no slots: said $said"
jq -e '[.bench[].server_metrics] | .[0].failed_slots_scrapes == 1 and .[1].failed_slots_scrapes == 0
       and all(.kv_cache_usage_peak == null and .scrapes >= 2)' "$tmp/out-noslots.json" >/dev/null ||
        fail "no slots: $(jq -c '[.bench[].server_metrics]' "$tmp/out-noslots.json")"
# a vLLM page keeps its own series, named, and /slots is never asked
jq -e '.bench[0].server_metrics | .kv_cache_source == "vllm:kv_cache_usage_perc" and .slots_scrapes == 0
       and .failed_slots_scrapes == 0' "$tmp/b.json" >/dev/null ||
        fail "vllm source: $(jq -c '.bench[0].server_metrics' "$tmp/b.json")"

# a sweep reads the layout from the cell's log (the last initializing line; capped: unknown)
init="0.00.013.817 I srv    load_model: initializing, n_slots = 2, n_ctx_slot = 512, kv_unified"
cat >"$tmp/kv.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-{port}", --metrics-file, "$tmp/llama.txt",
          --slots-file, "$tmp/slots.json"]
startup_timeout: 10s
stop_timeout: 2s
axes:
  kv:
    values:
      - {name: unified, args: [--log, "$init = 'false'", --log, "$init = 'true'"]}
      - {name: split, args: [--log, "$init = 'false'"]}
      - {name: capped, args: [--log, "0.00.013.000 W srv    load_model: the slot context (8192) exceeds the training context of the model (512) - capping", --log, "$init = 'true'"]}
      - {name: garbled, args: [--log, "$init = 'true'; x"]}
      - {name: none, args: []}
bench: {concurrency: [2], output_tokens: 8, requests: 4, warmup: 0}
objective: output_tokens_per_s@2
YAML
"$GAUNTLET" run "$tmp/kv.yaml" --journal "$tmp/kv.db" >"$tmp/out-kv" 2>&1 || { cat "$tmp/out-kv"; fail "run (kv) failed"; }
"$GAUNTLET" report --format json "$tmp/kv.db" >"$tmp/kv.json"
kv() { jq -c --arg c "$1" '.cells[] | select(.axes.kv == $c) | .bench[0].server_metrics | {kv_cache_usage_peak, kv_cache_layout}' "$tmp/kv.json"; }
for want in 'unified 0.75' 'split 0.375' 'capped 0.375 unknown' 'garbled 0.375 unknown' 'none 0.375 unknown'; do
        set -- $want
        got=$(kv "$1")
        jq -e --argjson p "$2" --arg l "${3:-$1}" '.kv_cache_usage_peak == $p and .kv_cache_layout == $l' <<<"$got" \
                >/dev/null || fail "sweep kv $1: $got"
done

# bench.server_metrics: false in a matrix
sed -e 's/^bench: {/bench: {server_metrics: false, /' -e '/name: none/d' "$tmp/m.yaml" >"$tmp/off.yaml"
"$GAUNTLET" run "$tmp/off.yaml" --journal "$tmp/off.db" >"$tmp/out2" 2>&1 || { cat "$tmp/out2"; fail "run (off) failed"; }
"$GAUNTLET" report --format json "$tmp/off.db" | jq -e '[.cells[].bench[] | has("server_metrics")] | any | not' >/dev/null ||
        fail "bench.server_metrics: false scraped"
echo "bench-scrape: all good"

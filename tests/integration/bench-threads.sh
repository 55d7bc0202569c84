#!/usr/bin/env bash
# bench-threads.sh -- `gauntlet bench --threads N` against gauntlet-schedsrv: a level spread
# over several event loops gives the same counts as one loop, the same requests (indices,
# request ids, prompts), figures consistent with one loop and with the server's own record
# of each request; open loop, duration, failures and a bad flag with several loops too.
set -euo pipefail
SCHEDSRV=${SCHEDSRV:-$(dirname "$GAUNTLET")/gauntlet-schedsrv}
tmp=$(mktemp -d)
pids=()
cleanup() {
        for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
        rm -rf "$tmp"
}
trap cleanup EXIT

. "$SRCDIR/tests/assert.sh"

# start NAME ARGS...: a server on a free port, its URL in $url
start() {
        local name=$1; shift
        rm -f "$tmp/$name.port"
        "$SCHEDSRV" --port-file "$tmp/$name.port" "$@" >"$tmp/$name.log" 2>&1 &
        pids+=($!)
        for _ in $(seq 100); do [ -s "$tmp/$name.port" ] && break; sleep 0.05; done
        [ -s "$tmp/$name.port" ] || fail "schedsrv $name did not start"
        url="http://127.0.0.1:$(cat "$tmp/$name.port")"
}

# 1. closed loop, two levels, one loop then two then three: the same counts and requests
start match --ttft-ms 20 --itl-ms 3
for n in 1 2 3; do
        curl -sf -X POST "$url/reset" >/dev/null
        "$GAUNTLET" bench --url "$url" --concurrency 8,3 --requests 40 --warmup 5 --output-tokens 6 \
                --threads "$n" --samples "$tmp/t$n.samples" --format json >"$tmp/t$n.json"
        curl -sf "$url/requests" >"$tmp/t$n.records"
        jq -e --argjson n "$n" '[.bench[].client_cpu.threads] == [$n, ([$n, 3] | min)]' "$tmp/t$n.json" >/dev/null \
                || fail "threads $n: $(jq -c '[.bench[].client_cpu]' "$tmp/t$n.json")"
        jq -e '.bench | all(.requests == 40 and .completed == 40 and .failed == 0 and .output_tokens == 240
                            and .chunks == 240 and .ttft_ms.count == 40 and .itl_ms.count == 200)' \
                "$tmp/t$n.json" >/dev/null \
                || fail "threads $n counts: $(jq -c '[.bench[] | {requests, completed, failed, output_tokens, chunks}]' "$tmp/t$n.json")"
        # every counted request once: indices 0..39 per level, request ids N = 5..44 and 50..89
        # of one run id (the warm-up's are 0..4 and 45..49)
        jq -e 'length == 80 and ([.[] | select(.concurrency == 8) | .index] | sort) == [range(40)]
               and ([.[] | select(.concurrency == 3) | .index] | sort) == [range(40)]
               and ([.[].request_id | sub("-[0-9]+$"; "")] | unique | length) == 1
               and ([.[].request_id | sub("^.*-"; "") | tonumber] | sort) == ([range(5; 45)] + [range(50; 90)])' \
                "$tmp/t$n.samples" >/dev/null \
                || fail "threads $n samples: $(jq -c '[.[] | {concurrency, index, request_id}]' "$tmp/t$n.samples")"
        # the server saw every request, warm-up included, each streamed whole, and the client
        # never saw a token before the server wrote it (nor very much later)
        jq -e '.records | length == 90 and all(.done and .chunks == 6)' "$tmp/t$n.records" >/dev/null \
                || fail "threads $n server records: $(jq -c '.records | length' "$tmp/t$n.records")"
        jq -e --slurpfile rec "$tmp/t$n.records" '
          ($rec[0].records | map({key: (.id | sub("^gauntlet-[0-9a-f]+-"; "")), value: .}) | from_entries) as $by |
          all(.[]; . as $c | $by[$c.request_id | sub("^gauntlet-[0-9a-f]+-"; "")] as $s | $s != null
              and ($c.ttft_ms - $s.ttft_us / 1000) >= -0.002 and ($c.ttft_ms - $s.ttft_us / 1000) < 50
              and ($c.e2e_ms - $s.last_us / 1000) >= -0.002 and ($c.e2e_ms - $s.last_us / 1000) < 50)' \
                "$tmp/t$n.samples" >/dev/null || fail "threads $n: client vs server per request"
done
# the same figures, within what the machine's noise allows: the schedule is 20 ms then 3 ms
for n in 2 3; do
        jq -e -n --slurpfile a "$tmp/t1.json" --slurpfile b "$tmp/t$n.json" '
          [range(2)] | all(. as $i | $a[0].bench[$i] as $x | $b[0].bench[$i] as $y |
            ($x.ttft_ms.p50 - $y.ttft_ms.p50 | fabs) < 10 and ($x.itl_ms.p50 - $y.itl_ms.p50 | fabs) < 1.5
            and $y.ttft_ms.p50 >= 20 and $y.itl_ms.p50 >= 2.5
            and ($x.client_cpu.events == $y.client_cpu.events))' >/dev/null \
                || fail "threads 1 vs $n: $(jq -c '[.bench[] | {ttft_ms, itl_ms, events: .client_cpu.events}]' "$tmp/t1.json" "$tmp/t$n.json")"
done
# the same prompts in the same order of requests: the server's prompt_tokens per request id
jq -e -n --slurpfile a "$tmp/t1.samples" --slurpfile b "$tmp/t2.samples" '
  def by: map({key: (.request_id | sub("^.*-"; "")), value: .prompt_tokens}) | from_entries;
  ($a[0] | by) == ($b[0] | by)' >/dev/null || fail "prompts differ between 1 and 2 loops"

# 2. open loop over two loops: the rate is the level's, the schedule one
"$GAUNTLET" bench --url "$url" --concurrency 16 --rate 200 --requests 60 --output-tokens 2 --threads 2 \
        --format json >"$tmp/rate.json"
jq -e '.bench[0] | .completed == 60 and .client_cpu.threads == 2 and (.send_rate_per_s > 190 and .send_rate_per_s < 210)' \
        "$tmp/rate.json" >/dev/null || fail "open loop: $(jq -c '.bench[0] | {completed, send_rate_per_s}' "$tmp/rate.json")"

# 3. a duration over two loops: one end for both
"$GAUNTLET" bench --url "$url" --concurrency 4 --duration 600ms --output-tokens 2 --threads 2 --format json \
        >"$tmp/dur.json"
jq -e '.bench[0] | .requests > 10 and .completed == .requests and .duration_s < 1.5' "$tmp/dur.json" >/dev/null \
        || fail "duration: $(jq -c '.bench[0] | {requests, completed, duration_s}' "$tmp/dur.json")"

# 4. failures and cut streams on any loop are counted, never dropped
start fail --ttft-ms 1 --itl-ms 1 --fail-every 3
"$GAUNTLET" bench --url "$url" --concurrency 4 --requests 24 --output-tokens 4 --threads 2 --format json \
        >"$tmp/f.json" || true
jq -e '.bench[0] | .requests == 24 and .completed == 16 and .failed == 8 and .errors.http_500 == 8
       and (.first_error | startswith("http_500"))' "$tmp/f.json" >/dev/null \
        || fail "500s: $(jq -c '.bench[0] | {requests, completed, failed, errors, first_error}' "$tmp/f.json")"
start close --ttft-ms 1 --itl-ms 1 --close-every 4 --close-after 2
"$GAUNTLET" bench --url "$url" --concurrency 4 --requests 24 --output-tokens 6 --threads 2 --format json \
        >"$tmp/c.json" || true
jq -e '.bench[0] | .requests == 24 and .completed == 18 and .failed == 6 and .aborted == 6' "$tmp/c.json" >/dev/null \
        || fail "closed: $(jq -c '.bench[0] | {requests, completed, failed, aborted, errors}' "$tmp/c.json")"

# 5. the text report says when the client was the bottleneck; a bad --threads is a usage error
"$GAUNTLET" bench --url "$url" --concurrency 2 --requests 4 --output-tokens 2 --threads 2 >"$tmp/text.out" || true
grep -q 'out tok/s' "$tmp/text.out" || fail "text: $(cat "$tmp/text.out")"
rc=0
"$GAUNTLET" bench --url "$url" --concurrency 2 --requests 4 --output-tokens 2 --threads 0 2>"$tmp/err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "invalid --threads '0'" "$tmp/err" || fail "--threads 0: rc $rc, $(cat "$tmp/err")"
echo "bench-threads: ok"

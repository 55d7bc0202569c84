#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# bench-threads.sh -- `gauntlet bench --threads N` against gauntlet-schedsrv: a level spread
# over several event loops gives the same counts as one loop, the same requests (indices,
# request ids, prompts), figures consistent with one loop and with the server's own record
# of each request; open loop, duration, failures and a bad flag with several loops too;
# multi_turn sessions divided among the loops (each turn carrying its own conversation, the
# counts one loop's), a trace's lines at their times from the loop of their request, and the
# server's /metrics scraped around every loop's share.
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

# 6. multi_turn over two loops (docs/bench.md "Client threads"): the level's session j goes
# on loop j % 2 (its request ids N are the loop's: N % 2 == j % 2), each loop keeps its own
# sessions, every turn carries the answers the server gave to its own conversation's
# earlier turns (schedsrv's log, --tag-content), the think time is kept, the cap of 4 counts
# sessions; the counts are one loop's
start mt --ttft-ms 2 --itl-ms 1 --tag-content --log-requests "$tmp/mt.log"
for n in 1 2; do
        : >"$tmp/mt.log" # the server appends: emptied, not removed
        "$GAUNTLET" bench --url "$url" --no-calibrate --dataset-name multi_turn --multi-turn-turns 3 \
                --multi-turn-input-len 6 --multi-turn-output-len 3 --multi-turn-think-time 100ms --num-prompts 5 \
                --warmup 1 --concurrency 4 --threads "$n" --samples "$tmp/mt$n.samples" --format json >"$tmp/mt$n.json"
        cp "$tmp/mt.log" "$tmp/mt$n.log"
        jq -e --argjson n "$n" '.bench[0] | .requests == 15 and .completed == 15 and .failed == 0
                and .client_cpu.threads == $n
                and .sessions == {started: 5, completed: 5, ended_by_failure: 0, cut: 0, turns: 15}' \
                "$tmp/mt$n.json" >/dev/null \
                || fail "multi_turn threads $n: $(jq -c '.bench[0] | {requests, completed, sessions, client_cpu}' "$tmp/mt$n.json")"
        # counted session s is the level's session s + 1 (session 0 is the warm-up)
        jq -e --argjson n "$n" 'length == 15 and ([.[] | .turn] | sort) == [1,1,1,1,1,2,2,2,2,2,3,3,3,3,3]
                and ([.[] | .session] | unique) == [0,1,2,3,4]
                and all(.[]; (.request_id | sub("^.*-"; "") | tonumber) % $n == (.session + 1) % $n)' \
                "$tmp/mt$n.samples" >/dev/null \
                || fail "multi_turn threads $n samples: $(jq -c '[.[] | [.session, .turn, .request_id]]' "$tmp/mt$n.samples")"
        # 6 conversations (the warm-up's too) of 3 turns, each on one loop, both loops used
        "$SRCDIR/tests/sessions-check.py" "$tmp/mt$n.log" --think 100 --sessions 6 --turns 3 --open 4 --at-most \
                --loops "$n" || fail "multi_turn threads $n bodies: see above"
done

# 7. a trace over two loops: the level's request i (on loop i % 2) is line i, scheduled at
# line i's time and reaching the server then (plus its send delay and some jitter), its body
# the one a single loop sends for line i
cat >"$tmp/trace.jsonl" <<'EOF'
{"timestamp": 0, "input_length": 40, "output_length": 2, "hash_ids": [7, 8, 9]}
{"timestamp": 50, "input_length": 30, "output_length": 3, "hash_ids": [7, 10]}
{"timestamp": 50, "input_length": 12, "output_length": 2}
{"timestamp": 120, "input_length": 20, "output_length": 2, "hash_ids": [11, 12]}
{"timestamp": 200.5, "input_length": 8, "output_length": 1, "hash_ids": [13]}
{"timestamp": 260, "input_length": 9, "output_length": 2}
{"timestamp": 300, "input_length": 16, "output_length": 4, "hash_ids": [7]}
{"timestamp": 400, "input_length": 5, "output_length": 2}
EOF
start tr --ttft-ms 2 --itl-ms 1 --log-requests "$tmp/tr.log"
for n in 1 2; do
        : >"$tmp/tr.log"
        "$GAUNTLET" bench --url "$url" --no-calibrate --dataset-name trace --dataset-path "$tmp/trace.jsonl" \
                --trace-block-size 16 --concurrency 8 --threads "$n" --samples "$tmp/tr$n.samples" --format json \
                >"$tmp/tr$n.json"
        cp "$tmp/tr.log" "$tmp/tr$n.log"
        jq -e --argjson n "$n" '.bench[0] | .requests == 8 and .completed == 8 and .client_cpu.threads == $n
                and .workload.arrivals == "trace"' "$tmp/tr$n.json" >/dev/null \
                || fail "trace threads $n: $(jq -c '.bench[0] | {requests, completed, client_cpu}' "$tmp/tr$n.json")"
done
python3 - "$tmp/trace.jsonl" "$tmp/tr1.samples" "$tmp/tr1.log" "$tmp/tr2.samples" "$tmp/tr2.log" <<'PY' \
        || fail "trace over two loops: see above"
import json, sys
trace = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
bad = 0
bodies = []
for samples, log in ((sys.argv[2], sys.argv[3]), (sys.argv[4], sys.argv[5])):
    got = {r["rid"]: r for r in (json.loads(l) for l in open(log)) if "rid" in r}
    sent = {int(s["request_id"].rsplit("-", 1)[1]): s for s in json.load(open(samples))}
    if sorted(sent) != list(range(len(trace))) or any(s["index"] != i for i, s in sent.items()):
        print(samples, ": request ids and indices", sorted((i, s["index"]) for i, s in sent.items())); bad += 1
        continue
    lag = lambda i: got[sent[i]["request_id"]]["t_us"] / 1000 - trace[i]["timestamp"] - sent[i]["send_delay_ms"]
    t0 = min(lag(i) for i in sent)
    for i, line in enumerate(trace):
        s = sent[i]
        at = got[s["request_id"]]["t_us"] / 1000 - t0
        if abs(s["scheduled_ms"] - line["timestamp"]) > 0.01 or s["output_tokens"] != line["output_length"]:
            print(samples, ": request", i, "scheduled", s["scheduled_ms"], "output", s["output_tokens"], "want", line); bad += 1
        if not line["timestamp"] <= at <= line["timestamp"] + s["send_delay_ms"] + 10:
            print(samples, ": line at", line["timestamp"], "ms reached the server at", at, "ms"); bad += 1
    bodies.append([got[sent[i]["request_id"]]["body"]["messages"] for i in range(len(trace))])
if bad == 0 and bodies[0] != bodies[1]:
    print("line bodies differ between one loop and two"); bad += 1
sys.exit(1 if bad else 0)
PY

# 8. the server's /metrics over two loops, on loop 0: its first scrape before either loop
# sends, its last once both are done, so its counter of completion requests grew by the
# level's 12
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf '%s\n' 'vllm:num_requests_running{model_name="m"} 1' 'vllm:num_preemptions_total{model_name="m"} {requests}' \
        >"$tmp/metrics.txt"
"$FIXTURE" --port "$port" --metrics-file "$tmp/metrics.txt" --token-delay-ms 2 >"$tmp/fx.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.05; done
"$GAUNTLET" bench --url "http://127.0.0.1:$port" --concurrency 4 --requests 12 --warmup 0 --output-tokens 4 \
        --no-calibrate --threads 2 --format json >"$tmp/sm.json"
jq -e '.bench[0] | .completed == 12 and .client_cpu.threads == 2 and .server_metrics.engine == "vllm"
       and .server_metrics.preemptions == 12 and .server_metrics.scrapes >= 2' "$tmp/sm.json" >/dev/null \
        || fail "scrape over two loops: $(jq -c '.bench[0] | {completed, server_metrics}' "$tmp/sm.json")"
echo "bench-threads: ok"

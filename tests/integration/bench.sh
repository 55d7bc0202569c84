#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# bench.sh -- `gauntlet bench` against gauntlet-schedsrv (bench/schedsrv.c): the JSON shape,
# completed == requests, keep-alive, open-loop rate, failures counted when the server
# answers 500 or closes mid-stream, and each request's samples matched to what the server
# did for that request (X-Request-Id).
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

# start NAME ARGS...: a server on a free port (it binds port 0), its URL in $url
start() {
        local name=$1; shift
        rm -f "$tmp/$name.port"
        "$SCHEDSRV" --port-file "$tmp/$name.port" "$@" >"$tmp/$name.log" 2>&1 &
        pids+=($!)
        for _ in $(seq 100); do [ -s "$tmp/$name.port" ] && break; sleep 0.05; done
        [ -s "$tmp/$name.port" ] || fail "schedsrv $name did not start"
        url="http://127.0.0.1:$(cat "$tmp/$name.port")"
}

# 1. closed loop, two levels: shape, counts, timing close to the schedule
start ok --ttft-ms 5 --itl-ms 2
"$GAUNTLET" bench --url "$url" --concurrency 1,4 --requests 12 --warmup 2 --output-tokens 8 \
        --format json >"$tmp/ok.json"
jq -e '.bench | length == 2' "$tmp/ok.json" >/dev/null || fail "two levels expected"
jq -e '[.bench[].concurrency] == [1, 4]' "$tmp/ok.json" >/dev/null || fail "levels in order"
for k in concurrency output_tokens_per_s ttft_ms itl_ms tpot_ms e2e_ms requests completed failed \
        total_tokens_per_s requests_per_s tokens_per_chunk send_delay_ms client_cpu warnings; do
        jq -e --arg k "$k" '.bench | all(has($k))' "$tmp/ok.json" >/dev/null || fail "missing key $k"
done
for k in p50 p90 p99 p999 mean; do
        jq -e --arg k "$k" '.bench | all(.ttft_ms[$k] | type == "number")' "$tmp/ok.json" >/dev/null \
                || fail "ttft_ms.$k"
done
jq -e '.bench | all(.requests == 12 and .completed == 12 and .failed == 0)' "$tmp/ok.json" >/dev/null \
        || fail "completed == requests == 12: $(jq -c '[.bench[] | {requests, completed, failed, errors}]' "$tmp/ok.json")"
jq -e '.bench | all(.output_tokens == 96 and .tokens_per_chunk == 1)' "$tmp/ok.json" >/dev/null \
        || fail "usage tokens"
# the server waits 5 ms then 2 ms per chunk: the client cannot see less, nor much more here
jq -e '.bench | all(.ttft_ms.p50 >= 5 and .ttft_ms.p50 < 30)' "$tmp/ok.json" >/dev/null \
        || fail "ttft $(jq -c '[.bench[].ttft_ms]' "$tmp/ok.json")"
jq -e '.bench | all(.itl_ms.p50 >= 1.5 and .itl_ms.p50 < 4)' "$tmp/ok.json" >/dev/null \
        || fail "itl $(jq -c '[.bench[].itl_ms]' "$tmp/ok.json")"
jq -e '.bench | all(.tpot_ms.p50 >= 1.5 and .tpot_ms.p50 < 4)' "$tmp/ok.json" >/dev/null || fail "tpot"
jq -e '.bench[0].output_tokens_per_s > 0 and .bench[1].output_tokens_per_s > .bench[0].output_tokens_per_s' \
        "$tmp/ok.json" >/dev/null || fail "throughput grows with concurrency"
# keep-alive: 28 requests (warm-up included) on at most 1 + 4 connections, plus the one
# GET /metrics that found none, on a connection of its own (never a stream's)
stats=$(curl -sf "$url/stats")
[ "$(jq '.requests' <<<"$stats")" -eq 28 ] || fail "server saw $(jq '.requests' <<<"$stats") requests"
[ "$(jq '.connections' <<<"$stats")" -le 6 ] || fail "connections not reused: $(jq '.connections' <<<"$stats")"
jq -e '[.bench[].warnings[] | select(startswith("no server metrics"))] | length == 1' "$tmp/ok.json" >/dev/null ||
        fail "the /metrics probe: $(jq -c '[.bench[].warnings]' "$tmp/ok.json")"

# 2. text output and the completions endpoint
"$GAUNTLET" bench --url "$url" --concurrency 2 --requests 4 --output-tokens 3 --endpoint completion \
        >"$tmp/text.out"
grep -q 'out tok/s' "$tmp/text.out" || fail "text table header"
grep -Eq '^ +2 +4 +4 +0 ' "$tmp/text.out" || fail "text row: $(cat "$tmp/text.out")"

# 3. open loop at a constant rate, and a duration
"$GAUNTLET" bench --url "$url" --concurrency 16 --rate 200 --requests 60 --output-tokens 2 --format json \
        >"$tmp/rate.json"
jq -e '.bench[0] | .completed == 60 and .rate == 200 and (.send_rate_per_s > 190 and .send_rate_per_s < 210)' \
        "$tmp/rate.json" >/dev/null || fail "open loop: $(jq -c '.bench[0] | {completed, send_rate_per_s}' "$tmp/rate.json")"
"$GAUNTLET" bench --url "$url" --concurrency 2 --duration 500ms --output-tokens 2 --format json >"$tmp/dur.json"
jq -e '.bench[0] | .requests > 10 and .completed == .requests' "$tmp/dur.json" >/dev/null || fail "duration"

# 3b. per request: every sample names its X-Request-Id, and the server's record of that
# request agrees: the client never saw a first token or a last one sooner than the server
# wrote it (one clock, CLOCK_MONOTONIC), nor very much later.
start match --ttft-ms 20 --itl-ms 3
"$GAUNTLET" bench --url "$url" --concurrency 4 --requests 16 --warmup 4 --output-tokens 5 \
        --samples "$tmp/match.samples" --format json >"$tmp/match.json"
curl -sf "$url/requests" >"$tmp/match.records"
jq -e 'length == 16 and all(.request_id | test("^gauntlet-[0-9a-f]{8}-[0-9]+$"))
       and ([.[].request_id] | unique | length) == 16' "$tmp/match.samples" >/dev/null \
        || fail "request ids: $(jq -c '[.[].request_id]' "$tmp/match.samples")"
jq -e '.records | length == 20 and all(.done and .chunks == 5)' "$tmp/match.records" >/dev/null \
        || fail "server records: $(jq -c . "$tmp/match.records")"
jq -e --slurpfile rec "$tmp/match.records" '
  ($rec[0].records | map({key: .id, value: .}) | from_entries) as $by |
  all(.[]; . as $c | $by[$c.request_id] as $s | $s != null
      and ($c.ttft_ms - $s.ttft_us / 1000) >= -0.002 and ($c.ttft_ms - $s.ttft_us / 1000) < 50
      and ($c.e2e_ms - $s.last_us / 1000) >= -0.002 and ($c.e2e_ms - $s.last_us / 1000) < 50)' \
        "$tmp/match.samples" >/dev/null \
        || fail "client vs server per request: $(jq -c '[.[] | {request_id, ttft_ms, e2e_ms}]' "$tmp/match.samples") $(jq -c . "$tmp/match.records")"
jq -e '.bench[0].client_cpu | .reads > 0 and .events >= .reads' "$tmp/match.json" >/dev/null \
        || fail "reads: $(jq -c '.bench[0].client_cpu' "$tmp/match.json")"

# 3b'. the same when tokens come 50 us apart: the next comes while the client reads the one
# before (libcurl reads again in the same turn, or finds more than was there when the loop
# took its times). A chunk that came later than those times is stamped when read, never with
# the time of the one before it (which made the last token, and so e2e, come before the
# server wrote it), nor with a time taken before it came (the time a socket was seen ready
# is taken after its received bytes are counted). One loop and two, five runs each: a
# window of microseconds (7 runs in 40 had an early end before the count came first).
start close50 --ttft-ms 1 --itl-ms 0.05
for n in 1 2 1 2 1 2 1 2 1 2; do
        curl -sf -X POST "$url/reset" >/dev/null
        "$GAUNTLET" bench --url "$url" --concurrency 8 --requests 160 --warmup 0 --output-tokens 40 --threads "$n" \
                --no-calibrate --samples "$tmp/close$n.samples" --format json >"$tmp/close$n.json"
        curl -sf "$url/requests" >"$tmp/close$n.records"
        jq -e --slurpfile rec "$tmp/close$n.records" '
          ($rec[0].records | map({key: .id, value: .}) | from_entries) as $by |
          length == 160 and all(.[]; . as $c | $by[$c.request_id] as $s | $s != null and $s.chunks == 40
              and ($c.ttft_ms - $s.ttft_us / 1000) >= -0.002 and ($c.e2e_ms - $s.last_us / 1000) >= -0.002
              and ($c.e2e_ms - $s.last_us / 1000) < 50)' "$tmp/close$n.samples" >/dev/null \
                || fail "tokens 50 us apart, $n loops: $(jq -c --slurpfile rec "$tmp/close$n.records" '
                     ($rec[0].records | map({key: .id, value: .}) | from_entries) as $by |
                     [.[] | . as $c | $by[$c.request_id] as $s
                      | select($s == null or ($c.e2e_ms - $s.last_us / 1000) < -0.002 or ($c.ttft_ms - $s.ttft_us / 1000) < -0.002)
                      | {request_id, ttft_ms, e2e_ms, server_ttft_us: $s.ttft_us, server_last_us: $s.last_us}]' \
                     "$tmp/close$n.samples")"
done

# 3c. several server processes on one port serve, and end with the first one
start multi --ttft-ms 1 --itl-ms 1 --processes 3
"$GAUNTLET" bench --url "$url" --concurrency 6 --requests 24 --output-tokens 3 --format json >"$tmp/multi.json"
jq -e '.bench[0] | .completed == 24' "$tmp/multi.json" >/dev/null || fail "processes: $(jq -c '.bench[0]' "$tmp/multi.json")"
[ "$(pgrep -fc -- "--port-file $tmp/multi.port")" -eq 3 ] || fail "3 server processes expected"
kill "${pids[-1]}"
wait "${pids[-1]}" 2>/dev/null || true
for _ in $(seq 50); do pgrep -f -- "--port-file $tmp/multi.port" >/dev/null || break; sleep 0.05; done
! pgrep -f -- "--port-file $tmp/multi.port" >/dev/null || fail "server copies outlived the first process"

# 4. a 500 on every third request: counted as failures, the rest complete
start fail --ttft-ms 1 --itl-ms 1 --fail-every 3
"$GAUNTLET" bench --url "$url" --concurrency 2 --requests 12 --output-tokens 4 --format json >"$tmp/f.json"
jq -e '.bench[0] | .requests == 12 and .completed == 8 and .failed == 4 and .errors.http_500 == 4' \
        "$tmp/f.json" >/dev/null || fail "500s: $(jq -c '.bench[0] | {requests, completed, failed, errors}' "$tmp/f.json")"
jq -e '.bench[0].warnings | any(test("4 of 12 requests failed"))' "$tmp/f.json" >/dev/null || fail "warning"

# 5. every fourth stream cut after two chunks: failed and aborted, not dropped
start close --ttft-ms 1 --itl-ms 1 --close-every 4 --close-after 2
"$GAUNTLET" bench --url "$url" --concurrency 3 --requests 12 --output-tokens 6 --format json >"$tmp/c.json"
jq -e '.bench[0] | .requests == 12 and .completed == 9 and .failed == 3 and .aborted == 3 and .errors.closed == 3' \
        "$tmp/c.json" >/dev/null || fail "closed: $(jq -c '.bench[0] | {requests, completed, failed, aborted, errors}' "$tmp/c.json")"

# 6. everything fails: exit 1; nobody listening: exit 1, failures counted as connect
start allfail --fail-every 1
set +e
"$GAUNTLET" bench --url "$url" --requests 3 --output-tokens 2 --format json >"$tmp/af.json"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "all failed must exit 1, got $rc"
jq -e '.bench[0] | .completed == 0 and .failed == 3' "$tmp/af.json" >/dev/null || fail "all failed counts"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
set +e
"$GAUNTLET" bench --url "http://127.0.0.1:$port" --requests 2 --output-tokens 2 --format json >"$tmp/nc.json" 2>/dev/null
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "no server must exit 1, got $rc"
jq -e '.bench[0].errors.connect == 2' "$tmp/nc.json" >/dev/null || fail "connect errors"

# 7. usage errors: exit 2 with a gauntlet: message
for args in "--requests 3 --output-tokens 2" \
            "--url $url --output-tokens 2" \
            "--url $url --requests 3 --duration 1s --output-tokens 2" \
            "--url $url --requests 3" \
            "--url $url --requests 3 --output-tokens 2 --concurrency 0" \
            "--url $url --requests 3 --output-tokens 2 --endpoint foo" \
            "--url http:// --requests 3 --output-tokens 2" \
            "--url $url --requests 3 --output-tokens 2 --bogus"; do
        set +e
        # shellcheck disable=SC2086
        "$GAUNTLET" bench $args >/dev/null 2>"$tmp/err"
        rc=$?
        set -e
        [ "$rc" -eq 2 ] || fail "'$args' must exit 2, got $rc"
        grep -q '^gauntlet: ' "$tmp/err" || fail "'$args': no gauntlet: message"
done
echo ok

#!/usr/bin/env bash
# run-client-bench.sh -- measures gauntlet's load generator against gauntlet-schedsrv, a
# server that streams on an exact schedule and reports what it really did (GET /stats).
# A benchmark, not a test: it prints figures; docs/bench.md records them.
#
#   bench/run-client-bench.sh [BUILD]      (default build; needs jq, curl, taskset)
#   SECTIONS="1 2" bench/run-client-bench.sh     only those sections (default: all four)
#
# 1. accuracy: measured TTFT/ITL vs the server's own record, 256 concurrent streams; per
#    request too (the client's --samples matched to the server's GET /requests)
# 2. SSE events per client CPU second (server sends as fast as it can, ITL 0; with 4 cpus or
#    more from several server processes, so that the client is the one that is saturated)
# 3. 10,000 concurrent streams in one process: RSS per stream
# 4. open-loop request rate vs target, constant spacing, 500..2000 req/s
# 5. 256 streams that all start at once (no warm-up): TTFT per request against the server's,
#    with the level's connections opened first (the default) and without (--no-preconnect)
# 6. the client at scale, over several threads (--threads): 256, 1,024 and 2,048 streams
#    against TTFT 20 ms, ITL 5 ms, 64 tokens, each with 1 and more threads; TTFT and ITL
#    against the server's truth (distributions and per request), events/s in total, and
#    whether the client was the bottleneck (SCALE_STREAMS, SCALE_THREADS, SCALE_REQUESTS)
# 7. SSE events per second in total with several threads (ITL 0, 512 streams; THREADS_LIST)
# The server's truth counts from each request's arrival (the kernel's receive timestamp),
# not from when the server read it; per request, the figures against the read and the
# server's read lag are printed too.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
G=${GAUNTLET:-$BUILD/bin/gauntlet}
S=${SCHEDSRV:-$BUILD/bin/gauntlet-schedsrv}
tmp=$(mktemp -d)
srv=
cleanup() {
        [ -n "$srv" ] && { kill "$srv" 2>/dev/null || true; wait "$srv" 2>/dev/null || true; }
        rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 143' TERM INT # the EXIT trap then stops the server (timeout(1) sends TERM)
ulimit -n "$(ulimit -Hn)"

start() {
        [ -n "$srv" ] && { kill "$srv"; wait "$srv" 2>/dev/null || true; }
        rm -f "$tmp/port"
        $SRV_PIN "$S" --port-file "$tmp/port" "$@" >/dev/null 2>&1 &
        srv=$!
        for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.05; done
        url="http://127.0.0.1:$(cat "$tmp/port")"
}

# Client and server on cores of their own when there are two or more (taskset); the
# accuracy run is also made with both left to the scheduler, for comparison.
SRV_PIN= CLI_PIN=
ncpu=$(nproc)
if [ "$ncpu" -ge 2 ] && command -v taskset >/dev/null; then
        SRV_PIN="taskset -c 1" CLI_PIN="taskset -c 0"
fi
echo "host: $ncpu cpus, load average $(cut -d' ' -f1-3 /proc/loadavg); client ${CLI_PIN:-unpinned}, server ${SRV_PIN:-unpinned}"

# per_request SAMPLES RECORDS INDENT: each request's TTFT and last-token time, client minus
# server in ms, matched by X-Request-Id (exact samples, no histogram buckets): against the
# server's arrival-based truth, then against its read of the request, and its read lag.
per_request() {
        jq -r --slurpfile rec "$2" --arg in "$3" '
          ($rec[0].records | map({key: .id, value: .}) | from_entries) as $by |
          [ .[] | select(.ok) | . as $c | $by[$c.request_id] | select(. != null) |
            {t: ($c.ttft_ms - .ttft_us / 1000), e: ($c.e2e_ms - .last_us / 1000),
             r: ($c.ttft_ms - (.ttft_us - .rx_lag_us) / 1000), l: (.rx_lag_us / 1000)} ] as $d |
          def pct(a; p): (a | sort) as $x | $x[((($x | length) - 1) * p / 100 | floor)];
          def r3: (. * 1000 | round) / 1000;
          "\($in)per request (\($d | length) of \(length) matched): TTFT client-server p50 \(pct([$d[].t]; 50) | r3) p99 \(pct([$d[].t]; 99) | r3) max \(pct([$d[].t]; 100) | r3) min \(pct([$d[].t]; 0) | r3) ms; last token p50 \(pct([$d[].e]; 50) | r3) p99 \(pct([$d[].e]; 99) | r3) ms",
          "\($in)   against the server'"'"'s read instead of the arrival: TTFT p50 \(pct([$d[].r]; 50) | r3) p99 \(pct([$d[].r]; 99) | r3) ms; the server'"'"'s read lag p50 \(pct([$d[].l]; 50) | r3) p99 \(pct([$d[].l]; 99) | r3) ms"' "$1"
}

# accuracy LABEL: 256 streams against TTFT 50 ms / ITL 10 ms / 100 chunks; compares the
# client's distributions with the server's, then each request's TTFT and last-token time
# with the server's record of that same request (matched by X-Request-Id).
accuracy() {
        echo "-- $1"
        start --ttft-ms 50 --itl-ms 10
        $CLI_PIN "$G" bench --url "$url" --concurrency 256 --warmup 256 --requests 1024 --output-tokens 100 \
                --samples "$tmp/a.samples" --format json >"$tmp/a.json"
        curl -s "$url/stats" >"$tmp/a.stats"
        curl -s "$url/requests" >"$tmp/a.records"
        jq -r --slurpfile s "$tmp/a.stats" '.bench[0] as $b | $s[0] as $t |
          "client TTFT p50 \($b.ttft_ms.p50) ms p99 \($b.ttft_ms.p99) ms | server TTFT p50 \($t.ttft_us.p50/1000) ms p99 \($t.ttft_us.p99/1000) ms | diff p50 \((($b.ttft_ms.p50 - $t.ttft_us.p50/1000)*1000|round)/1000) ms p99 \((($b.ttft_ms.p99 - $t.ttft_us.p99/1000)*1000|round)/1000) ms",
          "client ITL  p50 \($b.itl_ms.p50) ms p99 \($b.itl_ms.p99) ms | server ITL  p50 \($t.itl_us.p50/1000) ms p99 \($t.itl_us.p99/1000) ms | diff p50 \((($b.itl_ms.p50 - $t.itl_us.p50/1000)*1000|round)/1000) ms p99 \((($b.itl_ms.p99 - $t.itl_us.p99/1000)*1000|round)/1000) ms",
          "server lateness vs its schedule: p50 \($t.late_us.p50) us p99 \($t.late_us.p99) us; client CPU \($b.client_cpu.cores*100|round)% of a core; completed \($b.completed)/\($b.requests); connections \($t.connections)"' "$tmp/a.json"
        per_request "$tmp/a.samples" "$tmp/a.records" ""
}

SECTIONS=${SECTIONS:-1 2 3 4 5 6 7}
want() { case " $SECTIONS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

if want 1; then
echo "== 1. accuracy at 256 concurrent streams (server: TTFT 50 ms, ITL 10 ms, 100 chunks)"
if [ -n "$CLI_PIN" ]; then
        accuracy "client and server on cores of their own (client: $CLI_PIN, server: $SRV_PIN)"
        SRV_PIN= CLI_PIN= accuracy "both unpinned, sharing the $ncpu cpus"
else
        accuracy "client and server unpinned (one cpu)"
fi
fi

# The capacity of one client core needs a server that one core cannot be: with 4 cpus or
# more, K server processes (--processes) on cores 1..K, the client alone on core 0.
load_pin=$SRV_PIN procs=1
if [ -n "$CLI_PIN" ] && [ "$ncpu" -ge 4 ]; then
        procs=${SERVER_PROCS:-$(( ncpu - 1 < 8 ? ncpu - 1 : 8 ))}
        load_pin="taskset -c 1-$procs"
fi
# The machine's speed varies from run to run (shared hosts): REPEAT runs (default 5) at one
# event per write, and their median.
want 2 && for w in 1 16; do
        echo "== 2. SSE events per client CPU second (ITL 0, $w event(s) per server write, 64 streams, $procs server process(es))"
        n=1
        [ "$w" = 1 ] && n=${REPEAT:-5}
        : >"$tmp/e.all"
        for _ in $(seq "$n"); do
                SRV_PIN=$load_pin start --ttft-ms 0 --itl-ms 0 --events-per-write "$w" --processes "$procs"
                $CLI_PIN "$G" bench --url "$url" --concurrency 64 --warmup 64 --requests 256 --output-tokens 4000 --format json >"$tmp/e.json"
                jq -r '.bench[0] | "events \(.client_cpu.events) in \(.client_cpu.wall_s) s wall, client CPU \(.client_cpu.user_s + .client_cpu.sys_s) s (user \(.client_cpu.user_s), sys \(.client_cpu.sys_s)), \(.client_cpu.cores * 100 | round)% of a core -> \(.client_cpu.events_per_cpu_s | round) events per client CPU second; \(.client_cpu.events / .client_cpu.wall_s | round) events/s wall; \(.client_cpu.events_per_read) events per read"' "$tmp/e.json"
                jq '.bench[0].client_cpu.events_per_cpu_s' "$tmp/e.json" >>"$tmp/e.all"
        done
        [ "$n" -gt 1 ] && jq -rs 'sort | "median of \(length): \(.[length / 2 | floor] | round) events per client CPU second (min \(.[0] | round), max \(.[-1] | round))"' "$tmp/e.all"
done

if want 3; then
echo "== 3. 10,000 concurrent streams (server: TTFT 3 s, ITL 1 s, 10 chunks)"
start --ttft-ms 3000 --itl-ms 1000
$CLI_PIN "$G" bench --url "$url" --concurrency 10000 --requests 10000 --output-tokens 10 --format json >"$tmp/m.json"
jq -r '.bench[0] | "completed \(.completed)/\(.requests); RSS at start \(.client_cpu.rss_kb_start) KiB, peak \(.client_cpu.rss_kb_peak) KiB -> \(((.client_cpu.rss_kb_peak - .client_cpu.rss_kb_start) / 10000 * 10 | round) / 10) KiB per stream; TTFT p50 \(.ttft_ms.p50) ms p99 \(.ttft_ms.p99) ms; client CPU \(.client_cpu.user_s + .client_cpu.sys_s) s"' "$tmp/m.json"

fi

if want 5; then
echo "== 5. 256 streams all at once, no warm-up (server: TTFT 50 ms, ITL 10 ms, 20 chunks)"
for how in "" --no-preconnect; do
        for run in 1 2 3; do
                start --ttft-ms 50 --itl-ms 10
                $CLI_PIN "$G" bench --url "$url" --concurrency 256 --warmup 0 --requests 256 --output-tokens 20 $how \
                        --samples "$tmp/w.samples" --format json >"$tmp/w.json"
                curl -s "$url/requests" >"$tmp/w.records"
                jq -r --arg how "${how:-preconnect}" --argjson run "$run" --slurpfile rec "$tmp/w.records" --slurpfile b "$tmp/w.json" '
                  ($rec[0].records | map({key: .id, value: .}) | from_entries) as $by |
                  [ .[] | select(.ok) | . as $c | $by[$c.request_id] | select(. != null) | ($c.ttft_ms - .ttft_us / 1000) ] as $d |
                  def pct(a; p): (a | sort) as $x | $x[((($x | length) - 1) * p / 100 | floor)];
                  def r3: (. * 1000 | round) / 1000;
                  $b[0].bench[0] as $l |
                  "\($how) run \($run): \($d | length) matched; TTFT client-server p50 \(pct($d; 50) | r3) p99 \(pct($d; 99) | r3) max \(pct($d; 100) | r3) ms; preconnected \($l.preconnected); connect_ms p50 \($l.connect_ms.p50 // "-") p99 \($l.connect_ms.p99 // "-") (n \($l.connect_ms.count // 0))"' "$tmp/w.samples"
        done
done
fi

# Several client threads need cores of their own: with 4 cpus or more, the client on cores
# 0..T-1 (T the most threads asked), the server's processes on the rest (at most 8); with
# fewer, both unpinned (the figures then include the sharing).
scale_pins() { # THREADS_MAX
        local t=$1
        SCALE_CLI= SCALE_SRV= SCALE_PROCS=${SERVER_PROCS:-1}
        if [ "$ncpu" -ge 4 ] && command -v taskset >/dev/null; then
                [ "$t" -gt $((ncpu - 1)) ] && t=$((ncpu - 1))
                local k=$((ncpu - t)); [ "$k" -gt 8 ] && k=8
                SCALE_PROCS=${SERVER_PROCS:-$k}
                SCALE_CLI="taskset -c 0-$((t - 1))" SCALE_SRV="taskset -c $t-$((t + SCALE_PROCS - 1))"
        fi
}
maxof() { local m=0 x; for x in "$@"; do [ "$x" -gt "$m" ] && m=$x; done; echo "$m"; }

if want 6; then
scale_pins "$(maxof ${SCALE_THREADS:-1 2})"
echo "== 6. at scale (server: TTFT 20 ms, ITL 5 ms, 64 chunks, $SCALE_PROCS process(es) ${SCALE_SRV:-unpinned}; client ${SCALE_CLI:-unpinned})"
for streams in ${SCALE_STREAMS:-256 1024 2048}; do
        for threads in ${SCALE_THREADS:-1 2}; do
                SRV_PIN=$SCALE_SRV start --ttft-ms 20 --itl-ms 5 --processes "$SCALE_PROCS"
                reqs=${SCALE_REQUESTS:-$((streams * 4))}
                $SCALE_CLI "$G" bench --url "$url" --concurrency "$streams" --warmup "$streams" --requests "$reqs" \
                        --output-tokens 64 --threads "$threads" --samples "$tmp/s.samples" --format json >"$tmp/s.json"
                curl -s "$url/stats" >"$tmp/s.stats"
                curl -s "$url/requests" >"$tmp/s.records"
                jq -r --arg st "$streams" --arg th "$threads" --slurpfile s "$tmp/s.stats" '.bench[0] as $b | $s[0] as $t |
                  def r3: (. * 1000 | round) / 1000;
                  "\($st) streams, \($th) thread(s): TTFT client-server p50 \(($b.ttft_ms.p50 - $t.ttft_us.p50/1000) | r3) p99 \(($b.ttft_ms.p99 - $t.ttft_us.p99/1000) | r3) ms (server p50 \($t.ttft_us.p50/1000) p99 \($t.ttft_us.p99/1000)); ITL client-server p50 \(($b.itl_ms.p50 - $t.itl_us.p50/1000) | r3) p99 \(($b.itl_ms.p99 - $t.itl_us.p99/1000) | r3) ms (server p50 \($t.itl_us.p50/1000) p99 \($t.itl_us.p99/1000)); server late p99 \($t.late_us.p99) us; events \(($b.client_cpu.events / $b.client_cpu.wall_s) | round)/s in total, \($b.client_cpu.events_per_cpu_s | round) per CPU-second; client \($b.client_cpu.cores * 100 | round)% of a core in all, busiest thread \($b.client_cpu.loop_cores_max * 100 | round)%; bound \($b.client_cpu.bound); send delay p50 \($b.send_delay_ms.p50) p99 \($b.send_delay_ms.p99) ms; completed \($b.completed)/\($b.requests)"' "$tmp/s.json"
                per_request "$tmp/s.samples" "$tmp/s.records" "   "
        done
done
fi

if want 7; then
scale_pins "$(maxof ${THREADS_LIST:-1 2})"
echo "== 7. SSE events per second in total, several threads (ITL 0, 512 streams, 1 event per write, $SCALE_PROCS server process(es))"
for threads in ${THREADS_LIST:-1 2}; do
        SRV_PIN=$SCALE_SRV start --ttft-ms 0 --itl-ms 0 --processes "$SCALE_PROCS"
        $SCALE_CLI "$G" bench --url "$url" --concurrency 512 --warmup 512 --requests 1024 --output-tokens 1000 \
                --threads "$threads" --format json >"$tmp/t.json"
        jq -r --arg th "$threads" '.bench[0] | "\($th) thread(s): events \(.client_cpu.events) in \(.client_cpu.wall_s) s -> \(.client_cpu.events / .client_cpu.wall_s | round) events/s in total, \(.client_cpu.events_per_cpu_s | round) per CPU-second; client \(.client_cpu.cores * 100 | round)% of a core in all, busiest thread \(.client_cpu.loop_cores_max * 100 | round)%; \(.client_cpu.events_per_read) events per read; completed \(.completed)/\(.requests)"' "$tmp/t.json"
done
fi

want 4 || exit 0
echo "== 4. open-loop rate, constant spacing (server: TTFT 1 ms, ITL 1 ms, 2 chunks)"
for r in 500 1000 2000; do
        start --ttft-ms 1 --itl-ms 1
        $CLI_PIN "$G" bench --url "$url" --concurrency 1024 --rate "$r" --requests $((r * 10)) --output-tokens 2 --format json >"$tmp/r.json"
        curl -s "$url/stats" >"$tmp/r.stats"
        jq -r --arg r "$r" --slurpfile s "$tmp/r.stats" '.bench[0] as $b | $s[0] as $t |
          "target \($r)/s: client send rate \($b.send_rate_per_s) (\((($b.send_rate_per_s / ($r|tonumber) - 1) * 10000 | round) / 100)%), server-observed \($t.request_rate) (\((($t.request_rate / ($r|tonumber) - 1) * 10000 | round) / 100)%); send delay p50 \($b.send_delay_ms.p50) ms p99 \($b.send_delay_ms.p99) ms max \($b.send_delay_ms.max) ms; completed \($b.completed)/\($b.requests); client CPU \($b.client_cpu.cores*100|round)%"' "$tmp/r.json"
done

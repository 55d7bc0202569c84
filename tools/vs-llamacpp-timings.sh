#!/usr/bin/env bash
# tools/vs-llamacpp-timings.sh -- gauntlet bench side by side with llama.cpp's own
# per-request timings, on the same requests. llama-server puts its figures for a request in
# the last chunk of its stream ("timings": prompt_n, prompt_ms, predicted_n, predicted_ms,
# predicted_per_token_ms); gauntlet bench keeps them in each raw sample (server_timings),
# next to what the client measured (ttft_ms, tpot_ms, e2e_ms). A measurement, not a test:
# it prints figures, docs/bench.md records them.
#
#   tools/vs-llamacpp-timings.sh LLAMA_SERVER MODEL [SERVER_ARGS...]
#   GAUNTLET=... LEVELS=1,4 REQUESTS=32 INPUT=64 OUTPUT=64 tools/vs-llamacpp-timings.sh ...
#
# Per level, over completed requests, client minus server (ms): TTFT against prompt_ms (the
# prompt's evaluation: the first token is sampled from it) and TPOT against
# predicted_per_token_ms (the decode of each later token).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { echo "usage: $0 LLAMA_SERVER MODEL [SERVER_ARGS...]" >&2; exit 2; }
LS=$1 MODEL=$2
shift 2
G=${GAUNTLET:-build/bin/gauntlet}
tmp=$(mktemp -d)
srv=
cleanup() {
        [ -n "$srv" ] && { kill "$srv" 2>/dev/null || true; wait "$srv" 2>/dev/null || true; }
        rm -rf "$tmp"
}
trap cleanup EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$LS" -m "$MODEL" --host 127.0.0.1 --port "$port" "$@" >"$tmp/server.log" 2>&1 &
srv=$!
for _ in $(seq 600); do
        curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
        kill -0 "$srv" 2>/dev/null || { tail -n 20 "$tmp/server.log"; exit 1; }
        sleep 0.1
done
echo "llama-server $("$LS" --version 2>&1 | grep -m1 -o 'version: .*' || echo '?'); model $(basename "$MODEL"); args: $*"
echo "host: $(nproc) cpus, load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$G" bench --url "http://127.0.0.1:$port" --engine llama.cpp --concurrency "${LEVELS:-1,4}" \
        --requests "${REQUESTS:-32}" --warmup "${WARMUP:-4}" --input-tokens "${INPUT:-64}" \
        --output-tokens "${OUTPUT:-64}" --samples "$tmp/samples.json" --format json >"$tmp/bench.json"
jq -r '.bench[] | "level \(.concurrency): completed \(.completed)/\(.requests), \(.output_tokens_per_s) tok/s, TTFT p50 \(.ttft_ms.p50) ms, TPOT p50 \(.tpot_ms.p50) ms, prompt \(.prompt_tokens_per_request.mean) tokens (\(.prompt_calibration.template_tokens) template)"' "$tmp/bench.json"
jq -r '
  def pct(a; p): (a | sort) as $x | if ($x | length) == 0 then null else $x[((($x | length) - 1) * p / 100 | floor)] end;
  def r3: if . == null then "-" else ((. * 1000 | round) / 1000 | tostring) end;
  group_by(.concurrency)[] | . as $g | [ $g[] | select(.ok and .server_timings != null) ] as $s |
  ([ $s[] | .ttft_ms - .server_timings.prompt_ms ]) as $dt |
  ([ $s[] | .ttft_ms ]) as $ct | ([ $s[] | .server_timings.prompt_ms ]) as $sp |
  ([ $s[] | select(.tpot_ms != null) | .tpot_ms - .server_timings.predicted_per_token_ms ]) as $dp |
  ([ $s[] | select(.tpot_ms != null) | .server_timings.predicted_per_token_ms ]) as $sd |
  ([ $s[] | .e2e_ms - .server_timings.prompt_ms - .server_timings.predicted_ms ]) as $de |
  "level \($g[0].concurrency): \($s | length) of \($g | length) samples carry timings",
  "  TTFT client p50 \(pct($ct; 50) | r3) ms | llama.cpp prompt_ms p50 \(pct($sp; 50) | r3) ms | client - server: p50 \(pct($dt; 50) | r3) p99 \(pct($dt; 99) | r3) min \(pct($dt; 0) | r3) max \(pct($dt; 100) | r3) ms",
  "  TPOT llama.cpp predicted_per_token_ms p50 \(pct($sd; 50) | r3) ms | client - server: p50 \(pct($dp; 50) | r3) p99 \(pct($dp; 99) | r3) ms",
  "  e2e - (prompt_ms + predicted_ms): p50 \(pct($de; 50) | r3) p99 \(pct($de; 99) | r3) ms (what no server figure covers: HTTP, queueing, the client)"
' "$tmp/samples.json"

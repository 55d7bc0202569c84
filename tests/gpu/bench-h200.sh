#!/usr/bin/env bash
# tests/gpu/bench-h200.sh -- the bench's own accuracy on the GPU host (16 cpus), and gauntlet
# bench side by side with llama.cpp's per-request timings on the H200 (docs/bench.md).
#
#   tests/gpu/bench-h200.sh client    bench/run-client-bench.sh sections 1 and 5 (256 streams,
#                                     and 256 that all start at once, with and without
#                                     pre-connect), then start the sm90 llama-server build
#                                     (tests/gpu/llamacpp-cuda.sh build90) with the time left
#   tests/gpu/bench-h200.sh timings   wait for that build, then tools/vs-llamacpp-timings.sh
#                                     against it with every layer on the GPU
#   tests/gpu/bench-h200.sh scale     the client at scale over several threads (one command,
#                                     about 3 minutes, at most 8.5): bench/run-client-bench.sh
#                                     section 6 at 1,024 and 2,048 streams with 1, 4 and 8
#                                     threads, three passes (TTFT/ITL p50/p99 against the
#                                     server's truth, per request too, events/s in total,
#                                     client-bound), section 7 (events/s in total with 1, 4
#                                     and 8 threads), then section 1 (256 streams) once;
#                                     output in $OUT/scale.txt
# Inputs, in the ignored .device/ (carry it): the llama.cpp archive, and .device/prebuilt made
# by tools/pack-prebuilt.sh .device/prebuilt build/bin/gauntlet build/bin/gauntlet-schedsrv jq curl
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/h200-out}
mkdir -p "$OUT"
P=$PWD/.device/prebuilt
export PATH="$P/bin:$PATH" LD_LIBRARY_PATH="$P/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export GAUNTLET=$P/bin/gauntlet SCHEDSRV=$P/bin/gauntlet-schedsrv
case ${1:-client} in
client)
        { nvidia-smi -L; nproc; uptime; } >"$OUT/host.txt" 2>&1
        SECTIONS="1 5" bench/run-client-bench.sh 2>&1 | tee "$OUT/client.txt"
        OUT=$OUT DEADLINE=570 tests/gpu/llamacpp-cuda.sh build90 $((560 - SECONDS)) 2>&1 | tail -n 5
        ;;
scale)
        { nproc; uptime; lscpu | grep -E 'Model name|^CPU\(s\)'; } >"$OUT/host.txt" 2>&1
        for pass in 1 2 3; do
                [ "$SECONDS" -lt 330 ] || break
                echo "-- pass $pass" | tee -a "$OUT/scale.txt"
                SECTIONS=6 SCALE_STREAMS="1024 2048" SCALE_THREADS="1 4 8" timeout $((500 - SECONDS)) \
                        bench/run-client-bench.sh 2>&1 | tee -a "$OUT/scale.txt"
        done
        [ "$SECONDS" -lt 420 ] && SECTIONS=7 THREADS_LIST="1 4 8" timeout $((470 - SECONDS)) \
                bench/run-client-bench.sh 2>&1 | tee -a "$OUT/scale.txt"
        [ "$SECONDS" -lt 470 ] && SECTIONS=1 timeout $((505 - SECONDS)) bench/run-client-bench.sh 2>&1 | tee -a "$OUT/scale.txt"
        echo "took ${SECONDS}s" | tee -a "$OUT/scale.txt"
        ;;
timings)
        OUT=$OUT tests/gpu/llamacpp-cuda.sh build90 420 2>&1 | tail -n 5
        ls=$PWD/build-h200/llamacpp/sm90/bin/llama-server
        [ -x "$ls" ] || { echo "no sm90 llama-server"; exit 1; }
        for lv in "1,4" "16"; do
                LEVELS=$lv REQUESTS=64 INPUT=96 OUTPUT=128 tools/vs-llamacpp-timings.sh "$ls" testbed/model.gguf \
                        -ngl 99 --parallel 16 -t 4 2>&1 | tee -a "$OUT/timings.txt"
        done
        ;;
esac

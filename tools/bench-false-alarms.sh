#!/usr/bin/env bash
# bench-false-alarms.sh URL ENGINE OUT [BENCH OPTIONS]: the forced detectors' false alarms on
# a server's bench outputs (docs/metrics.md "The bench's own outputs"): four workloads, each
# forced to its length where the engine takes ignore_eos: random prompts through chat at
# concurrency 1, 8 and 32 (300 requests each, 64 in, 128 out), through completions (300, 32
# in and 150 out, each +-30%), a ShareGPT-like file of 300 conversations, and 40 long outputs
# (LONG tokens, default 1000; the testbed model's slots hold 256). One line per workload:
# rc, [verdict, judged, flagged, output tokens, the flagged kept]; OUT.NAME.json keep the
# levels. BUILD picks the build folder (default build).
set -u
url=$1; eng=$2; out=$3; shift 3
G="$(dirname "$0")/../${BUILD:-build}/bin/gauntlet"
python3 "$(dirname "$0")/sharegpt-words.py" 300 "$out.sharegpt-data.json"
run() { local name=$1; shift; "$G" bench --url "$url" --engine "$eng" --format json "$@" >"$out.$name.json" 2>"$out.$name.err"; echo "$name rc=$? $(jq -c '[.verdict, ([.bench[].outputs_judged] | add), ([.bench[].outputs_flagged] | add), ([.bench[].output_tokens] | add), [.bench[].flagged[]]]' "$out.$name.json")"; }
run random-chat --concurrency 1,8,32 --requests 300 --input-tokens 64 --output-tokens 128 "$@"
run random-completion --endpoint completion --concurrency 8 --requests 300 --input-tokens 32 --output-tokens 150 --random-range-ratio 0.3 "$@"
run sharegpt --dataset-name sharegpt --dataset-path "$out.sharegpt-data.json" --num-prompts 300 --sharegpt-min-len 1 --concurrency 8 --requests 300 "$@"
run long --concurrency 4 --requests 40 --input-tokens 16 --output-tokens ${LONG:-1000} "$@"

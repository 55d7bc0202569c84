#!/usr/bin/env bash
# run.sh -- how often llama-server's log loses its tail at exit, and what a sweep makes of it
# (docs/supervisor.md). From the repository root, with LLAMA_SERVER set:
#   docs/data/lost-tail/run.sh raw SECONDS OUT      three loops of a launch that fails at
#       load (--cache-type-k q8_0 --flash-attn on, testbed model), side by side, its output
#       read through a pipe: OUT/raw.txt counts the launches whose output has no E line,
#       OUT/lost-*.txt keeps them; raw-file: the same, its output written to a file
#   docs/data/lost-tail/run.sh sweep SECONDS OUT [GAUNTLET]   three loops of a 12-cell sweep
#       (10 cells crash at load): OUT/sweeps.txt has a line of verdict counts per sweep
set -euo pipefail
mode=$1 secs=$2 out=$3 g=${4:-build/bin/gauntlet}
: "${LLAMA_SERVER:?set LLAMA_SERVER}"
mkdir -p "$out"
out=$(cd "$out" && pwd) root=$(pwd) g=$(cd "$(dirname "$g")" && pwd)/$(basename "$g")
raw() {
        local end=$((SECONDS + secs)) n=0 lost=0
        while [ $SECONDS -lt $end ]; do
                n=$((n + 1))
                if [ "$mode" = raw-file ]; then
                        "$LLAMA_SERVER" -m testbed/model.gguf -t 1 -c 256 --cache-type-k q8_0 --flash-attn on --port 0 \
                                >"$out/o$1.txt" 2>&1 || true
                else # through a pipe, as gauntlet reads a server's output
                        "$LLAMA_SERVER" -m testbed/model.gguf -t 1 -c 256 --cache-type-k q8_0 --flash-attn on --port 0 \
                                2>&1 | cat >"$out/o$1.txt" || true
                fi
                grep -q ' E ' "$out/o$1.txt" || { lost=$((lost + 1)); cp "$out/o$1.txt" "$out/lost-$1-$n.txt"; }
        done
        rm -f "$out/o$1.txt"
        echo "loop $1: $n launches, $lost without an E line" >>"$out/raw.txt"
}
sweep() {
        local d=$out/w$1 end=$((SECONDS + secs))
        mkdir -p "$d"
        sed "s|@MODEL@|$root/testbed/model.gguf|" >"$d/m.yaml" <<'YAML'
engine: llama.cpp
model: "@MODEL@"
args: [-t, "1", --fit, "off"]
startup_timeout: 60s
request_timeout: 30s
stop_timeout: 5s
axes:
  ctk: {flag: --cache-type-k, values: [f16, q8_0, q4_0]}
  ctv: {flag: --cache-type-v, values: [f16, q8_0]}
  np: {flag: -np, values: ["1", "4"]}
strategy: grid
checks: default
probes: false
bench: {concurrency: [1], input_tokens: 16, output_tokens: 16, requests: 4, repeats: 1, checks_under_load: false}
emit: []
YAML
        while [ $SECONDS -lt $end ]; do
                rm -rf "$d/j.db" "$d/j"
                (cd "$d" && PATH=$(dirname "$LLAMA_SERVER"):$PATH "$g" run m.yaml --journal j.db >out.txt 2>&1) || true
                "$g" report --format json "$d/j.db" | jq -r '[.cells[] | "\(.verdict)/\(.cause // "-")"] | group_by(.)
                        | map("\(length) \(.[0])") | join(", ")' >>"$out/sweeps.txt"
                grep -c "no line of its log says why it exited" "$d/out.txt" >>"$out/relaunched.txt" || true
        done
}
rm -f "$out"/raw.txt "$out"/sweeps.txt "$out"/relaunched.txt
for k in 1 2 3; do "${mode%-file}" "$k" & done
wait

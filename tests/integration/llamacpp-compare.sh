#!/usr/bin/env bash
# tier: engine (tests/run engine)
# llamacpp-compare.sh -- gauntlet compare (docs/compare.md) on the real llama-server (skipped,
# by name, without one):
#   - 11 sweeps of one unchanged matrix, each compared with the next: 10 of 10 no regression;
#   - two "builds": one build of llama-server run with its default threads, then with
#     --threads 1 (the matmuls on one CPU thread: slower for a reason that can be stated).
#     This stands in for two builds that differ (docs/compare.md says so): compare names
#     every cell slower outside the noise, exit 1, and exit 0 with --max-slowdown above it.
. "$SRCDIR/tests/lib.sh"
need_llama_server
command -v jq >/dev/null || fail "jq is needed"
bindir=$(dirname "$LLAMA_SERVER")
model=${LLAMA_MODEL:-$SRCDIR/testbed/model.gguf}
[ -f "$model" ] || { echo "SKIP: no model ($model)"; exit 77; }
matrix() { # extra args
        cat >"$tmp/m.yaml" <<YAML
engine: llama.cpp
model: $model
args: [-np, "1", -c, "512"$1]
startup_timeout: 60s
stop_timeout: 5s
axes:
  batch:
    values:
      - {name: b64, args: [-b, "64"]}
      - {name: b512, args: [-b, "512"]}
checks:
  - {name: up, prompt: "Reply with exactly: OK", expect: {regex: "."}}
probes: false
bench: {concurrency: [1], input_tokens: 32, output_tokens: 16, requests: 12}
objective: output_tokens_per_s@1
emit: []
YAML
}
sweep() { # journal
        PATH="$bindir:$PATH" "$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/$1.db" >"$tmp/$1.out" 2>&1 ||
                { cat "$tmp/$1.out"; fail "$1: the sweep failed"; }
}
cmp() { # old new [flags...]
        local a=$1 b=$2; shift 2
        rc=0
        "$GAUNTLET" compare --format json "$@" "$tmp/$a.db" "$tmp/$b.db" >"$tmp/cmp.json" 2>"$tmp/cmp.err" || rc=$?
}
# a threshold for the drift between two sweeps of this machine (MAX_SLOWDOWN, default 25%:
# a shared CPU; on a quiet one 5% holds)
th=${MAX_SLOWDOWN:-25%}

matrix ""
for i in $(seq 0 10); do sweep "u$i"; done
worst=0
for i in $(seq 0 9); do
        cmp "u$i" "u$((i + 1))" --max-slowdown "$th"
        [ "$rc" = 0 ] || fail "unchanged try $((i + 1)): exit $rc: $(jq -c '.summary, [.cells[] | .speed]' "$tmp/cmp.json")"
        w=$(jq "[.cells[].speed | select(. != null) | .change | if . < 0 then -. else . end] | max" "$tmp/cmp.json")
        worst=$(jq -n "[$worst, $w] | max")
done

if [ "$(nproc)" -lt 2 ]; then
        echo "llamacpp-compare: unchanged 10 of 10, largest |change| $worst; one CPU: --threads 1 changes nothing, not compared"
        exit 0
fi
matrix ', --threads, "1"'
sweep slow
cmp u10 slow --max-slowdown 10%
[ "$rc" = 1 ] || fail "--threads 1: exit $rc: $(jq -c '.summary, [.cells[] | .speed]' "$tmp/cmp.json")"
jq -e '[.cells[] | .speed.regression and .speed.interval[1] < 0 and .change == "same"] | all' "$tmp/cmp.json" \
        >/dev/null || fail "--threads 1: not every cell slower: $(jq -c '[.cells[] | .speed]' "$tmp/cmp.json")"
slow=$(jq -c '[.cells[] | [.cell, .speed.change, .speed.interval]]' "$tmp/cmp.json")
cmp u10 slow --max-slowdown 1000%
[ "$rc" = 0 ] || fail "--threads 1 with --max-slowdown 1000%: exit $rc"
echo "llamacpp-compare: unchanged 10 of 10, largest |change| $worst; --threads 1: $slow"

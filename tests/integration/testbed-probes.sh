#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# testbed-probes.sh -- issue #31's done-when on our own real server: the testbed with one
# fault flag per cell, each breaking only on the traffic one probe asks (docs/testbed.md
# "Faults only some requests see"), swept with the default checks, the eval and a bench.
# Every broken cell is faster than the honest one (which waits 2 ms a token), so without its
# probe it would win:
#   long-context  '+' once the context passes 128 tokens   -> the long-context probe
#   sampling      word salad at temperature > 0             -> the sampling probe
#   multi-turn    '!!!!' from the third user turn           -> the multi-turn probe
#   batch         digits off by one with 8 or more at once  -> checks and eval under load (at 16)
#   honest-slow   right everywhere                          -> pass, and named best
. "$SRCDIR/tests/lib.sh"
cat >"$tmp/m.yaml" <<YAML
engine: testbed
args: [--threads, "8"]
startup_timeout: 20s
request_timeout: 60s
stop_timeout: 5s
axes:
  backend:
    values:
      - {name: long-context, args: [--fault-context, "128"]}
      - {name: sampling, args: [--fault-sampling]}
      - {name: multi-turn, args: [--fault-turn, "3"]}
      - {name: batch, args: [--fault-batch, "8"]}
      - {name: honest-slow, args: [--token-delay, "2"]}
eval: {builtin: [products], samples: 40}
bench: {concurrency: [1, 16], input_tokens: 32, output_tokens: 64, requests: 32}
objective: output_tokens_per_s@1
emit: []
YAML
PATH="$(dirname "$TESTBED"):$PATH" "$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>&1 || true
cat "$tmp/out"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json" || fail "report failed"
cell() { jq -r --arg b "$1" ".cells[] | select(.axes.backend == \$b) | $2" "$tmp/r.json"; }
caught_by() { # backend verdict probe-name-prefix
        local v
        v=$(cell "$1" .verdict)
        [ "$v" = "$2" ] || fail "backend $1: $v/$(cell "$1" .cause): $(cell "$1" .evidence), want $2"
        [ -z "$3" ] || jq -e --arg b "$1" --arg p "$3" --arg v "$2" '.cells[] | select(.axes.backend == $b) |
                .checks | any((.name | startswith($p)) and .verdict == $v)' "$tmp/r.json" >/dev/null ||
                fail "backend $1 was not caught by the $3 probe: $(cell "$1" .evidence)"
}
caught_by long-context garbage long-context
caught_by sampling garbage sampling
caught_by multi-turn garbage multi-turn
caught_by batch wrong ""
# the batch fault is right alone: every check asked one at a time passed
jq -e '.cells[] | select(.axes.backend == "batch") | [.checks[] | select(.name == "ok" or .name == "math")] | all(.verdict == "pass")' \
        "$tmp/r.json" >/dev/null || fail "the batch fault failed a check asked alone"
jq -e '.cells[] | select(.axes.backend == "honest-slow") | .checks | all(.verdict == "pass")' "$tmp/r.json" >/dev/null ||
        fail "the honest cell failed a check or probe"
[ "$(jq -r .best "$tmp/r.json")" = "$(cell honest-slow .id)" ] || fail "best is not the honest cell"
echo "ok"

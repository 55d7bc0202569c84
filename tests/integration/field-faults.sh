#!/usr/bin/env bash
# tier: faults (tests/run faults)
# field-faults.sh -- issue #31's done-when on a stand-in gauntlet's probes were not written
# against: tests/standin/fieldsrv.py (Python, rule-based answers, words as tokens), one
# backend per failure that public reports saw only on some traffic. Swept with the default
# checks (and so the probes), the eval and a bench:
#   long      "+" for every token once the context passes 2,000 words   -> the long-context probe
#   sampling  word salad at temperature > 0                             -> the sampling probe
#   turns     "...a S componentes_obs Worce!!!!" from the third turn     -> the multi-turn probe
#   load      coherent wrong numbers with 8 or more requests at once    -> the checks/eval under load (at 16)
#   bench     "!" for every token of a prompt over 200 words            -> the bench's outputs judged
#   honest    right everywhere, and the slowest per token               -> pass, and named best
# Every broken backend is faster than the honest one: without its probe it would win.
. "$SRCDIR/tests/lib.sh"
command -v python3 >/dev/null || { echo "SKIP: python3 is missing"; exit 77; }

cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [python3, "$SRCDIR/tests/standin/fieldsrv.py", --port, "{port}", --context, "4096"]
startup_timeout: 20s
request_timeout: 30s
stop_timeout: 5s
axes:
  backend:
    flag: --backend
    values:
      - {name: long, args: [--backend, long, --token-delay-ms, "0.2"]}
      - {name: sampling, args: [--backend, sampling, --token-delay-ms, "0.2"]}
      - {name: turns, args: [--backend, turns, --token-delay-ms, "0.2"]}
      - {name: load, args: [--backend, load, --token-delay-ms, "1"]}
      - {name: bench, args: [--backend, bench, --token-delay-ms, "0.2"]}
      - {name: honest, args: [--backend, honest, --token-delay-ms, "2"]}
eval: {builtin: [products], samples: 40}
bench: {concurrency: [1, 16], input_tokens: 400, output_tokens: 32, requests: 32}
objective: output_tokens_per_s@1
emit: [script]
YAML
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>&1 || true
cat "$tmp/out"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json" || fail "report failed"

cell() { jq -r --arg b "$1" ".cells[] | select(.axes.backend == \$b) | $2" "$tmp/r.json"; }
verdict_is() { # backend verdict cause-regex evidence-regex
        local v c e
        v=$(cell "$1" .verdict)
        c=$(cell "$1" '.cause // "-"')
        e=$(cell "$1" '.evidence // "-"')
        [ "$v" = "$2" ] || fail "backend $1: verdict $v ($c: $e), want $2"
        [[ $c =~ $3 ]] || fail "backend $1: cause '$c', want /$3/ (evidence: $e)"
        [[ $e =~ $4 ]] || fail "backend $1: evidence '$e', want /$4/"
}
verdict_is honest pass '^-$' '.*'
verdict_is long garbage '^repeat$' '\+\+\+\+'
verdict_is sampling garbage '.' '.'
verdict_is turns garbage '.' 'Worce|!!!!'
verdict_is load wrong '.' '.'
verdict_is bench garbage '^repeat$' '!!!!'
# the probe that caught each one says so
jq -e '.cells[] | select(.axes.backend == "long") | .checks | any(.name | startswith("long-context")) ' "$tmp/r.json" >/dev/null ||
        fail "no long-context result for the long backend"
jq -e '.cells[] | select(.axes.backend == "sampling") | .checks | any((.name | startswith("sampling")) and .verdict == "garbage")' \
        "$tmp/r.json" >/dev/null || fail "the sampling backend was not caught by the sampling probe"
jq -e '.cells[] | select(.axes.backend == "turns") | .checks | any((.name | startswith("multi-turn")) and .verdict == "garbage")' \
        "$tmp/r.json" >/dev/null || fail "the turns backend was not caught by the multi-turn probe"
# the honest one passed every probe, none of them skipped for want of a capability it has
jq -e '.cells[] | select(.axes.backend == "honest") | .checks | all(.verdict == "pass")' "$tmp/r.json" >/dev/null ||
        fail "the honest backend did not pass every check and probe: $(cell honest '[.checks[] | select(.verdict != "pass") | "\(.name) \(.verdict) \(.evidence)"]')"
best=$(jq -r .best "$tmp/r.json")
[ "$best" = "$(cell honest .id)" ] || fail "best is $best, not the honest backend"
grep -q "; best: $(cell honest .id)" "$tmp/out" || fail "the run did not name the honest backend best"
echo "ok"

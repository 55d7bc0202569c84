#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# bench-pick.sh -- a sweep benchmarks the cells that pass and picks the truly faster one:
# two correct fixture configurations, one streaming a token every 2 ms and one every 20 ms;
# a third that answers garbage is never benchmarked.
. "$SRCDIR/tests/lib.sh"

cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-{port}"]
startup_timeout: 10s
stop_timeout: 2s
axes:
  speed:
    values:
      - {name: slow, args: [--token-delay-ms, "20"]}
      - {name: fast, args: [--token-delay-ms, "2"]}
      - {name: broken, args: [--token-delay-ms, "2", --answer, "++++++++++++++++++++++++++++++++"]}
bench: {concurrency: [1, 4], output_tokens: 16, requests: 12}
objective: output_tokens_per_s@1
YAML
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "run failed"; }
cat "$tmp/out" >&2
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json"
best=$(jq -r '.best as $b | .cells[] | select(.id == $b) | .axes.speed' "$tmp/r.json")
[ "$best" = fast ] || fail "best is '$best', want fast"
slow=$(jq -r '.cells[] | select(.axes.speed == "slow") | .bench[] | select(.concurrency == 1) | .output_tokens_per_s' "$tmp/r.json")
fast=$(jq -r '.cells[] | select(.axes.speed == "fast") | .bench[] | select(.concurrency == 1) | .output_tokens_per_s' "$tmp/r.json")
echo "tok/s at concurrency 1: slow $slow, fast $fast"
awk -v s="$slow" -v f="$fast" 'BEGIN { exit !(f > 3 * s && s > 0) }' || fail "fast ($fast) is not clearly faster than slow ($slow)"
# every level completed every request, and the garbage cell was never benchmarked
jq -e '[.cells[] | select(.verdict == "pass") | .bench[] | .completed == .requests] | all' "$tmp/r.json" >/dev/null ||
        fail "a level lost requests"
[ "$(jq -r '.cells[] | select(.axes.speed == "broken") | (.bench // [] | length)' "$tmp/r.json")" = 0 ] ||
        fail "the garbage cell was benchmarked"
grep -q "gauntlet-generic.service" "$tmp/out" || fail "no unit written for the winner"
grep -q "Won with: .*tok/s" "$tmp/j/gauntlet-generic.service" || fail "the unit does not say what it won with"
# run and emit build the unit and the script with the same library call (emit_cell): the
# same text from the same journal
"$GAUNTLET" emit systemd "$tmp/j.db" | cmp -s - "$tmp/j/gauntlet-generic.service" || fail "run's unit differs from emit's"
"$GAUNTLET" emit script "$tmp/j.db" | cmp -s - "$tmp/j/launch-generic.sh" || fail "run's script differs from emit's"
echo "bench-pick.sh: all good"

#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# bench-under-load.sh -- the eval under load (issue #31 item 1, "under load"): a fixture
# backend that answers every product right alone (the smoke suite one at a time, the eval
# two at a time) and coherently wrong (off by one) while 6 or more requests are in flight.
# The eval's first 40 questions go out amid the bench's highest level (8 streams): its
# accuracy there is far below its own alone on the same questions, so the cell is
# wrong/accuracy with both figures and the test; the honest backend passes and is best,
# its eval under load shown in every report format; probes.under_load: false asks none.
. "$SRCDIR/tests/lib.sh"
command -v jq >/dev/null || fail "jq is needed"

matrix() { # under_load-value
        cat <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-{port}", --token-delay-ms, "3"]
startup_timeout: 10s
stop_timeout: 2s
axes:
  fault:
    values:
      - {name: none}
      - {name: load, args: [--wrong-when-concurrent, "6"]}
baseline: {fault: none}
eval: {builtin: [products], samples: 60, concurrency: 2}
bench: {concurrency: [1, 8], input_tokens: 16, output_tokens: 24, requests: 64}
probes: {under_load: $1}
YAML
}
matrix "{eval_samples: 40}" >"$tmp/m.yaml"
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>&1 || true
cat "$tmp/out" >&2
grep -q Sanitizer "$tmp/out" && fail "a sanitizer report in the run"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json"
q() { jq -r --arg f "$1" ".cells[] | select(.axes.fault == \$f) | $2" "$tmp/r.json"; }
# alone, both answer every question
for f in none load; do
        [ "$(q $f '.eval.correct')" = 60 ] || fail "$f: $(q $f '.eval.correct')/60 right alone"
        [ "$(q $f '.checks | all(.verdict == "pass")')" = true ] || fail "$f: the smoke suite did not pass"
done
[ "$(q load '"\(.verdict)/\(.cause)"')" = wrong/accuracy ] || fail "load: $(q load '"\(.verdict)/\(.cause) \(.evidence)"')"
ev=$(q load .evidence)
[[ "$ev" =~ ^accuracy\ under\ load\ at\ concurrency\ 8:\ 0\.[0-9]{3}\ \[0\.[0-9]{3},\ 0\.[0-9]{3}\]\ \(([0-9]+)/40\)\ below\ alone\ 1\.000\ \[0\.[0-9]{3},\ 1\.000\]\ \(40/40\):\ two-proportion\ z-test\ z\ =\ -[0-9.]+,\ p\ [\<=]\ [0-9.]+\ \(95%\)$ ]] ||
        fail "load evidence: $ev"
[ "${BASH_REMATCH[1]}" -le 30 ] || fail "${BASH_REMATCH[1]}/40 right under load: $ev"
[ "$(q none .verdict)" = pass ] || fail "none: $(q none '"\(.verdict)/\(.cause) \(.evidence)"')"
[ "$(jq -r '.best as $b | .cells[] | select(.id == $b) | .axes.fault' "$tmp/r.json")" = none ] || fail "best is not the honest backend"
# the answers under load are journaled with the level: its concurrency, each question's seq
[ "$(q none '[.bench[] | select(.eval_under_load)] | length')" = 1 ] || fail "none: not one level with the eval under load"
[ "$(q none '.bench[] | select(.eval_under_load) | .eval_under_load | "\(.concurrency) \(.asked) \(.answers | length) \([.answers[].seq] | sort == [range(40)])"')" = "8 40 40 true" ] ||
        fail "none: eval_under_load $(q none '.bench[1].eval_under_load | {concurrency, asked}')"
[ "$(q none '.bench[0].eval_under_load')" = null ] || fail "the eval went out at concurrency 1 too"
# the reports: under-load accuracy against alone and the reference's alone
u=$(q none '.eval.under_load | "\(.concurrency) \(.n) \(.correct) \(.alone.n) \(.alone.correct)"')
[ "$u" = "8 40 40 40 40" ] || fail "none: eval.under_load $u"
nid=$(q none .id)
"$GAUNTLET" report "$tmp/j.db" >"$tmp/r.txt"
"$GAUNTLET" report --format markdown "$tmp/j.db" >"$tmp/r.md"
"$GAUNTLET" report --format html "$tmp/j.db" >"$tmp/r.html"
grep -q "^$nid: bench outputs: [0-9]* judged, 0 flagged; eval under load @8: 40/40, accuracy 1.000 \[0.912, 1.000\]; alone 40/40" \
        "$tmp/r.txt" || { cat "$tmp/r.txt"; fail "text: no eval under load"; }
for f in md html; do
        grep -q "eval under load @8: 40/40, accuracy 1.000" "$tmp/r.$f" || fail "r.$f: no eval under load"
        grep -q "accuracy under load at concurrency 8: " "$tmp/r.$f" || fail "r.$f: no wrong/accuracy evidence"
done

# probes.under_load: false: none asked under load; the per-check gate still sees the load
matrix false >"$tmp/off.yaml"
"$GAUNTLET" run "$tmp/off.yaml" --journal "$tmp/off.db" >"$tmp/out2" 2>&1 || true
"$GAUNTLET" report --format json "$tmp/off.db" >"$tmp/off.json"
jq -e '[.cells[].bench[]? | select(.eval_under_load)] | length == 0' "$tmp/off.json" >/dev/null ||
        fail "under_load: false still asked the eval under load"
[ "$(jq -r '.cells[] | select(.axes.fault == "load") | .verdict' "$tmp/off.json")" = wrong ] ||
        fail "under_load: false: the load fault passed"
expect_none_alive "processes left" 5
echo "bench-under-load.sh: all good"

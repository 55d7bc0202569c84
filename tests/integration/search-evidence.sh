#!/usr/bin/env bash
# tier: engine (tests/run engine)
# search-evidence.sh -- the search reads what the engine says (docs/search.md, "How evidence
# is read"), on the real llama-server (skipped, by name, without one) and the space of
# tests/engines/llamacpp/search-evidence.yaml (36 cells, 32 crash at load, most with a line
# naming the quantized cache type at fault), with budget: {launches: 12}:
#   - no value that a failure's line names is launched again after that line, nor in more
#     than two cells in all (one may hold it beside a value its line names first);
#   - a cell of the best family (f16 caches) passed, with at most a third of the budget
#     spent on failures before the first of them; at most 5 failures in all
#     (one per quantized value: 4, and one whose line, "quantized V cache requires
#     flash_attn", names no value);
#   - every pruned cell whose reason blames a named value quotes the line;
#   - with 400-token prompts (more than the model holds) it stops within 3 launches;
#   - --no-prune launches all 36 cells.
. "$SRCDIR/tests/lib.sh"
BUDGET=12
run_llama_space search-evidence "$BUDGET"
"$GAUNTLET" report --format json "$tmp/m.db" >"$tmp/r.json"
launched() { jq '[.cells[] | select(.verdict != "skipped")]' "$tmp/r.json"; }
n=$(launched | jq length)
failed=$(launched | jq '[.[] | select(.verdict != "pass")] | length')
passed=$(launched | jq '[.[] | select(.verdict == "pass" and .axes.ctk == "f16" and .axes.ctv == "f16")] | length')
echo "launched $n (budget $BUDGET), $failed failed, $passed of the f16 family passed"
launched | jq -r '.[] | "\(.axes.fa) \(.axes.ctk) \(.axes.ctv) \(.axes.np) \(.verdict)/\(.cause // "") \(.evidence // "" | .[0:90])"'
grep -E "^\[launch" "$tmp/out" || true
[ "$n" -le "$BUDGET" ] || fail "$n cells launched, the budget is $BUDGET"
[ "$passed" -ge 1 ] || fail "no cell of the f16 family passed"
# the launches in order: failures before the first pass of the family, and in all (each
# failing value once, and the one the "requires flash_attn" line leaves open)
order=$(grep -E '^\[launch [0-9]+' "$tmp/out" | sed -E 's/^\[launch ([0-9]+)[^]]*\] +//')
before=$(printf '%s\n' "$order" | awk '/ctk=f16 ctv=f16/ && / pass / {exit} / crash/ {n++} END {print n + 0}')
echo "failures before the f16 family passed: $before; failures in all: $failed"
[ $((before * 3)) -le "$BUDGET" ] || fail "$before failures before the f16 family passed: more than a third of the budget ($BUDGET)"
# The report's best, in the search's launch order: the failures launched before it, a
# figure and no gate here. On this CPU the four f16 cells serve alike (one cell measured
# 500-650 tok/s over six runs of this space), so which of them the report names best is the
# noise's choice, and it was launched 1st, 4th, 8th or 9th by that choice alone. What the
# search answers for is reaching the family, gated above; the best's own position is
# measured where the cells differ, on the H200 (docs/search.md).
best=$(jq -r '.best // ""' "$tmp/r.json")
to_best=$(jq --arg b "$best" '.search.best_so_far as $t | ([$t[] | select(.cell == $b) | .launch] | min) as $l
        | [$t[] | select(.launch < $l and .verdict != "pass")] | length' "$tmp/r.json")
echo "the best ($best): $to_best failures launched before it"
[ -n "$best" ] || fail "no best cell"
jq -e --arg b "$best" '.cells[] | select(.id == $b) | .verdict == "pass" and .axes.ctk == "f16" and .axes.ctv == "f16"' \
        "$tmp/r.json" >/dev/null || fail "the best ($best) is no passing cell of the f16 family"
[ "$failed" -le 5 ] || fail "$failed failed launches: 4 quantized values, each named by its line, need 4 (and one more for the line that names none)"
# each value a failure's line names ("K cache type q8_0 ...": ctk=q8_0): never launched after
# the line (it is condemned at once), and how often in all is printed (a value may ride
# along in a cell whose line names its partner before its own line comes)
for axis_word in "ctk:K cache" "ctv:V cache"; do
        axis=${axis_word%%:*} word=${axis_word#*:}
        for v in q8_0 q4_0; do
                expect_named_once "$order" "$axis=$v " "$word type $v"
        done
done
# the pruned cells blamed on a named value quote its line
bad=$(jq '[.cells[] | select(.verdict == "skipped" and .cause == "pruned" and ((.evidence // "") | test("is named by the line")))
        | select((.evidence | contains("cache type")) | not)] | length' "$tmp/r.json")
[ "$bad" -eq 0 ] || fail "$bad pruned cells blame a named value without quoting its line"
named=$(jq '[.cells[] | select(.cause == "pruned" and ((.evidence // "") | test("is named by the line")))] | length' "$tmp/r.json")
echo "pruned: $(jq '[.cells[] | select(.cause == "pruned")] | length' "$tmp/r.json"), $named of them by a named value"
[ "$named" -ge 1 ] || fail "no pruned cell was blamed on the value a line named"
# The same space with a bench that cannot fit the model's 256 tokens: the cells that start
# answer overload/context, and -np (an axis about the context) might change that; the
# search tries another -np beside the first failure, gets the same line, and stops within 3
# launches with one line saying what to change (on the H200 it spent all 32 launches of
# its budget before it read -np so: docs/search.md).
sed -e "s|@MODEL@|$SRCDIR/testbed/model.gguf|" -e "s|@BUDGET@|$BUDGET|" -e 's/input_tokens: 16,/input_tokens: 400,/' \
        "$SRCDIR/tests/engines/llamacpp/search-evidence.yaml" >"$tmp/c.yaml"
grep -q 'input_tokens: 400,' "$tmp/c.yaml" || fail "the context matrix was not made"
set +e
"$GAUNTLET" run "$tmp/c.yaml" --journal "$tmp/c.db" >"$tmp/cout" 2>&1
rc=$?
set -e
grep -E '^\[launch|^search' "$tmp/cout" || true
[ "$rc" = 1 ] || { cat "$tmp/cout"; fail "exit $rc where no cell can pass (1 expected)"; }
n=$(grep -c '^\[launch ' "$tmp/cout" || true)
[ "$n" -ge 1 ] && [ "$n" -le 3 ] || fail "$n launches before stopping where the bench cannot fit"
line=$(grep '^search: ' "$tmp/cout" || true)
case "$line" in
"search: stopped after $n launch"*"overload/context"*"shorten bench.input_tokens/output_tokens or give the server a longer context") ;;
*) fail "the stop line: $line" ;;
esac
echo "a bench too long for the model: stopped after $n launches"
# --no-prune launches every cell, those a line condemned too (the search orders them last)
set +e
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/np.db" --no-prune >"$tmp/npout" 2>&1
rc=$?
set -e
[ "$rc" = 0 ] || { tail -5 "$tmp/npout"; fail "--no-prune: exit $rc"; }
"$GAUNTLET" report --format json "$tmp/np.db" >"$tmp/np.json"
[ "$(jq '[.cells[] | select(.verdict != "skipped")] | length' "$tmp/np.json")" = 36 ] ||
        fail "--no-prune launched $(jq '[.cells[] | select(.verdict != "skipped")] | length' "$tmp/np.json") of 36 cells"
echo "--no-prune: 36 of 36 cells launched"

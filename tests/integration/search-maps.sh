#!/usr/bin/env bash
# tier: engine (tests/run engine)
# search-maps.sh -- the search reads the engine's lines on an axis without a flag, whose
# values the matrix names otherwise than the engine spells them (docs/search.md, "How
# evidence is read"), on the real llama-server (skipped, by name, without one) and the
# 60-cell space of tests/engines/llamacpp/search-maps.yaml (q5 is `-ctk q5_1 -ctv q5_1`,
# iq4 `iq4_nl`, k8 `-ctk q8_0`: each crashes at load with a line that spells it the
# engine's way), with budget: {launches: 16}:
#   - a value that a failure's line spells ("K cache type iq4_nl ...": cache=iq4) is not
#     launched after that line, and in at most two cells in all;
#   - a cell of f16 or bf16 caches passed, with at most a third of the budget spent on
#     failures before the first of them, and the best is such a cell;
#   - the cells pruned for a named value quote its line.
. "$SRCDIR/tests/lib.sh"
BUDGET=16
run_llama_space search-maps "$BUDGET"
grep -E '^\[launch|^search' "$tmp/out" || true
"$GAUNTLET" report --format json "$tmp/m.db" >"$tmp/r.json"
launched() { jq '[.cells[] | select(.verdict != "skipped")]' "$tmp/r.json"; }
n=$(launched | jq length)
failed=$(launched | jq '[.[] | select(.verdict != "pass")] | length')
[ "$n" -le "$BUDGET" ] || fail "$n cells launched, the budget is $BUDGET"
family='/cache=(f16|bf16) / && / pass /'
order=$(grep -E '^\[launch [0-9]+' "$tmp/out" | sed -E 's/^\[launch ([0-9]+)[^]]*\] +//')
before=$(printf '%s\n' "$order" | awk "$family {exit} / crash/ {n++} END {print n + 0}")
printf '%s\n' "$order" | grep -qE "cache=(f16|bf16) .* pass " || fail "no cell of f16 or bf16 caches passed"
echo "launched $n (budget $BUDGET), $failed failed, $before before the first pass of f16 or bf16 caches"
[ $((before * 3)) -le "$BUDGET" ] || fail "$before failures before a cell of f16 or bf16 caches passed: more than a third of the budget ($BUDGET)"
best=$(jq -r '.best // ""' "$tmp/r.json")
[ -n "$best" ] || fail "no best cell"
jq -e --arg b "$best" '.cells[] | select(.id == $b) | .verdict == "pass" and (.axes.cache == "f16" or .axes.cache == "bf16")' \
        "$tmp/r.json" >/dev/null || fail "the best ($best) is no passing cell of f16 or bf16 caches"
# each value by the engine's spelling of it: never launched after a line spelling it, at
# most two cells in all once a line did
named=0
for pair in q5:q5_1 iq4:iq4_nl k8:q8_0; do
        v=${pair%%:*} spelled=${pair#*:}
        expect_named_once "$order" "cache=$v " "cache type $spelled "
        [ -z "$named_at" ] || named=$((named + 1))
done
[ "$named" -ge 2 ] || fail "only $named of the quantized values were named by a line: the space does not test what it is for"
bad=$(jq '[.cells[] | select(.verdict == "skipped" and .cause == "pruned" and ((.evidence // "") | test("is named by the line")))
        | select((.evidence | contains("cache type")) | not)] | length' "$tmp/r.json")
[ "$bad" -eq 0 ] || fail "$bad pruned cells blame a named value without quoting its line"
echo "pruned: $(jq '[.cells[] | select(.cause == "pruned")] | length' "$tmp/r.json"), $(jq '[.cells[] | select(.cause == "pruned" and ((.evidence // "") | test("is named by the line")))] | length' "$tmp/r.json") of them by a named value"
echo "ok"

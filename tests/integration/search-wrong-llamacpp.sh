#!/usr/bin/env bash
# tier: engine (tests/run engine)
# search-wrong-llamacpp.sh -- wrong answers with nothing in the log, on the real
# llama-server (skipped, by name, without one): the 36-cell space of
# tests/engines/llamacpp/search-wrong.yaml, whose RoPE settings and chat templates other
# than the model's load fine and answer a golden question wrong, with budget:
# {launches: 32} (it stops on its own after 15 to 20 when written):
#   - every cell launched settles as the real engine answers it: the default RoPE and
#     template pass, every other cell answers wrong (never a crash: nothing in the log);
#   - the best is a passing cell, and the search stops before the budget;
#   - no launch holds two values each of which already answered wrong in two cells (a
#     value whose failures shared partners is tried beside other partners that never
#     failed: beside a second suspect, its failure says nothing of either; the search
#     before launched rope=base50k beside tmpl=llama2 twice so);
#   - each value that answers wrong is launched in at most 4 of its 12 cells (3 or 4 when
#     written), and the cells not launched for it quote the cells that answered wrong.
. "$SRCDIR/tests/lib.sh"
BUDGET=32
run_llama_space search-wrong "$BUDGET"
grep -E '^\[launch|^search' "$tmp/out" || true
order=$(grep -E '^\[launch [0-9]+' "$tmp/out" | sed -E 's/^\[launch ([0-9]+)[^]]*\] +//')
[ -n "$order" ] || fail "nothing launched"
grep -q '^search: after [0-9]* launches no cell left' "$tmp/out" || fail "the search did not stop on its own before the budget"
bad=$(printf '%s\n' "$order" | awk '
        { good = $1 == "rope=default" && $2 == "tmpl=model" }
        good && $5 != "pass" { print "the default settings did not pass: " $0 }
        !good && $5 !~ /^wrong\// { print "not a wrong answer: " $0 }')
[ -z "$bad" ] || fail "$bad"
twice=$(printf '%s\n' "$order" | awk '
        {
                known = 0; n = 0
                for (i = 1; i <= 2; i++)
                        if ($i != "rope=default" && $i != "tmpl=model") { v[++n] = $i; known += failed[$i] >= 2 }
                if (known >= 2) print
                if ($5 != "pass") for (j = 1; j <= n; j++) failed[v[j]]++
        }')
[ -z "$twice" ] || fail "launched beside a second value known to answer wrong: $twice"
for v in rope=lin1.1 rope=base50k tmpl=chatml tmpl=llama2; do
        n=$(printf '%s\n' "$order" | grep -c -- "$v " || true)
        echo "$v: launched in $n cells"
        [ "$n" -ge 1 ] || fail "$v never launched: the space does not test what it is for"
        [ "$n" -le 4 ] || fail "$v launched in $n cells (at most 4 of its 12)"
done
"$GAUNTLET" report --format json "$tmp/m.db" >"$tmp/r.json"
best=$(jq -r '.best // ""' "$tmp/r.json")
[ -n "$best" ] || fail "no best cell"
jq -e --arg b "$best" '.cells[] | select(.id == $b) | .verdict == "pass" and .axes.rope == "default" and .axes.tmpl == "model"' \
        "$tmp/r.json" >/dev/null || fail "the best ($best) is not a passing cell"
unsaid=$(jq -r '.cells[] | select(.verdict == "skipped") | select((.evidence // "") | test("predicted wrong answers: (rope|tmpl)=") | not)
        | "\(.axes.rope) \(.axes.tmpl) \(.axes.ub) \(.axes.fa): \(.evidence // "")"' "$tmp/r.json")
[ -z "$unsaid" ] || fail "cells not launched without a value's wrong answers as the reason: $unsaid"
echo "launched $(printf '%s\n' "$order" | wc -l), $(printf '%s\n' "$order" | grep -c ' wrong/' || true) answered wrong; pruned $(jq '[.cells[] | select(.verdict == "skipped")] | length' "$tmp/r.json")"
echo "ok"

#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# compare-count.sh -- gauntlet compare of two sweeps that counted their output tokens unlike
# (docs/compare.md "Counted apart"), on the testbed: the same matrix swept with the model's
# tokenizer and with `tokenizer: none` (bytes per token from its first cell's own counts).
#   - what compare says of each passing cell is what its two counts in `gauntlet report` say:
#     with a side counted by bytes (an estimate), apart where the bytes a token differ; two
#     counts of the text's tokens apart where their ways and their bytes a token differ; the
#     change as measured; the text's "counted apart" on exactly the cells apart;
#   - tokenizer -> none: the first cell (its own counts against the tokenizer) apart where
#     its bytes a token differ, and said so; none -> none: the first cells alike;
#   - the objective total_tokens_per_s: the same.
. "$SRCDIR/tests/lib.sh"
command -v jq >/dev/null || fail "jq is needed"
G=$GAUNTLET
matrix() { # NAME TOKENIZER OBJECTIVE
        cat >"$tmp/$1.yaml" <<YAML
engine: testbed
tokenizer: $2
args: [--threads, "2"]
axes: {moe: {flag: --moe-backend, values: [reference, nvfp4]}}
checks: [{name: math, prompt: "What is 17 * 19?", max_tokens: 24, expect: {regex: "323"}}]
probes: false
bench: {concurrency: [1], input_tokens: 16, output_tokens: 64, requests: 8}
objective: $3
emit: []
YAML
}
sweep() { # NAME TOKENIZER [OBJECTIVE]
        matrix "$1" "$2" "${3:-output_tokens_per_s@1}"
        "$G" run "$tmp/$1.yaml" --journal "$tmp/$1.db" >"$tmp/$1.out" 2>&1 || true
        [ "$(grep -c ' pass ' "$tmp/$1.out")" = 2 ] || { cat "$tmp/$1.out"; fail "$1: two passes wanted"; }
        "$G" report --format json "$tmp/$1.db" >"$tmp/$1.json" || fail "$1: no report"
}
sweep tok "$SRCDIR/testbed/model.gguf"
sweep none none
sweep none2 none

# each cell's count as the report gives it: "moe=X" -> [rule, bytes per token]
counts() { jq -c '[.cells[] | select(.verdict == "pass") | {key: ("moe=" + .axes.moe),
                   value: [.bench[0].count.rule, .bench[0].count.bytes_per_token,
                           (.bench[0].count | if .rule == "tokenizer" then .tokenizer else .source end)]}]
                 | from_entries' "$tmp/$1.json"; }
echo "tokenizer: $(counts tok)"
echo "none:      $(counts none)"
echo "none2:     $(counts none2)"
jq -e 'to_entries | all(.value[0] == "tokenizer")' <<<"$(counts tok)" >/dev/null || fail "tok: $(counts tok)"
jq -e '[to_entries[].value[0]] | sort == ["bytes", "own"]' <<<"$(counts none)" >/dev/null ||
        fail "none: one cell by its own counts, the other by bytes wanted: $(counts none)"

# what compare should make of a cell's two counts, from the reports alone: with a side
# counted by bytes (an estimate), apart where the bytes a token differ by a thousandth; two
# counts of the text's tokens apart where their rules, tokenizers or own counts' sources
# differ and so do their bytes a token
expect() { # OLD NEW CELL -> true or false
        jq -n --argjson o "$(counts "$1")" --argjson n "$(counts "$2")" --arg c "$3" '
                $o[$c] as $a | $n[$c] as $b |
                if ($a[0] == "bytes" or $b[0] == "bytes") then ($b[1] / $a[1] - 1) | fabs >= 0.001
                else ($a[0] != $b[0] or $a[2] != $b[2]) and (($b[1] / $a[1] - 1) | fabs >= 0.001) end'
}
check() { # OLD NEW: every passing cell as expect says, its change as measured
        "$G" compare --format json "$tmp/$1.db" "$tmp/$2.db" >"$tmp/c.json" || true
        "$G" compare "$tmp/$1.db" "$tmp/$2.db" >"$tmp/c.txt" || true
        local c e said=0
        for c in moe=reference moe=nvfp4; do
                e=$(expect "$1" "$2" "$c")
                echo "$1 -> $2, $c: expected apart $e, $(jq -c --arg c "$c" '.cells[] | select(.cell == $c) |
                        .speed | {counted_apart, count, change, old, new}' "$tmp/c.json")"
                jq -e --arg c "$c" --argjson e "$e" --argjson o "$(counts "$1")" --argjson n "$(counts "$2")" '
                        .cells[] | select(.cell == $c) | .speed |
                        .counted_apart == $e and (.change - (.new / .old - 1) | fabs) < 1e-6
                        and (if $e then .count.old == $o[$c][0] and .count.new == $n[$c][0]
                                        and (.count.bytes_per_token_old - $o[$c][1] | fabs) < 1e-6
                                        and (.count.bytes_per_token_new - $n[$c][1] | fabs) < 1e-6
                             else has("count") | not end)' "$tmp/c.json" >/dev/null ||
                        fail "$1 -> $2, $c: not as expected"
                [ "$e" = true ] && said=$((said + 1))
        done
        [ "$(grep -c '; counted apart, old by ' "$tmp/c.txt")" = "$said" ] ||
                { cat "$tmp/c.txt"; fail "$1 -> $2: the text says counted apart of other than $said cells"; }
}
# a tokenizer, then none: the first cell's own counts (apart by their rules), the second's bytes
check tok none
if [ "$(expect tok none moe=reference)" = true ]; then
        grep -q "counted apart, old by its tokenizer (.* bytes a token), new by its own counts (.* bytes a token): part of the change may be the count's" \
                "$tmp/c.txt" || { cat "$tmp/c.txt"; fail "tokenizer -> own counts: the text"; }
fi
# none twice: the first cells' own counts alike, the second's two estimates at their sweeps'
# bytes a token (which two sweeps of one matrix rarely share)
check none none2
jq -e '.cells[] | select(.cell == "moe=reference") | .speed.counted_apart | not' "$tmp/c.json" >/dev/null ||
        fail "own counts -> own counts: alike wanted"
# another objective: the same
sweep tokt "$SRCDIR/testbed/model.gguf" total_tokens_per_s@1
sweep nonet none total_tokens_per_s@1
check tokt nonet
echo "compare-count: all good"

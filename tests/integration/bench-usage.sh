#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# bench-usage.sh -- token counts are gauntlet's, not the server's word (issue #24 item 2):
# fixture servers that answer the same bench with the same 20 tokens each, one of them
# faster; the slower ones lie in usage.completion_tokens: 1000000 (above max_tokens), 100x
# the truth (above too) and 1.6x the truth (max_tokens itself, believable on its face).
# The honest, faster cell wins; every liar's figures are the counted ones, and the
# disagreement is shown per level in the JSON, the text, the Markdown and the HTML report.
. "$SRCDIR/tests/lib.sh"
command -v jq >/dev/null || fail "jq is needed"

# the bench's calibrated prompts start "NNNNNNNN:" (00000001: ...), the checks' never do
words="w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w20"
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --pid-file, "$tmp/pids-{port}", --answer-for, "0000=$words"]
startup_timeout: 10s
stop_timeout: 2s
axes:
  usage:
    values:
      - {name: honest, args: [--token-delay-ms, "2"]}
      - {name: million, args: [--token-delay-ms, "6", --usage-completion-tokens, "1000000"]}
      - {name: hundredfold, args: [--token-delay-ms, "6", --usage-completion-tokens, "2000"]}
      - {name: inflated, args: [--token-delay-ms, "6", --usage-completion-tokens, "32"]}
bench: {concurrency: [1, 2], output_tokens: 32, requests: 6}
objective: output_tokens_per_s@1
YAML
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "run failed"; }
cat "$tmp/out" >&2
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json"
best=$(jq -r '.best as $b | .cells[] | select(.id == $b) | .axes.usage' "$tmp/r.json")
[ "$best" = honest ] || fail "best is '$best', want honest: a lie in usage won"
level() { jq -c --arg c "$1" --argjson n "$2" '.cells[] | select(.axes.usage == $c) | .bench[] | select(.concurrency == $n)' "$tmp/r.json"; }
for c in honest million hundredfold inflated; do
        for n in 1 2; do
                l=$(level "$c" "$n")
                [ -n "$l" ] || fail "$c@$n: no level"
                # 6 requests of 20 streamed tokens each, whatever usage said
                [ "$(jq '.output_tokens' <<<"$l")" = 120 ] || fail "$c@$n: output_tokens $(jq .output_tokens <<<"$l"), want 120"
                [ "$(jq '.output_tokens_per_request.max' <<<"$l")" = 20 ] || fail "$c@$n: $(jq -c .output_tokens_per_request <<<"$l")"
                jq -e '.output_tokens_per_s < 20000' <<<"$l" >/dev/null || fail "$c@$n: $(jq .output_tokens_per_s <<<"$l") tok/s"
                # the honest cell's own counts (usage, chunks) agree and set the sweep's bytes per
                # token, it counted by its chunks (the text's count that usage confirmed); the
                # liars are counted by it, their usage never
                want=bytes
                [ "$c" = honest ] && want=chunks
                [ "$(jq -r '.usage_check.method' <<<"$l")" = "$want" ] || fail "$c@$n: $(jq -c .usage_check <<<"$l")"
        done
done
expect_check() { # cell usage_tokens disagreeing above_max
        local l
        l=$(level "$1" 1)
        [ "$(jq -c '.usage_check | [.requests, .usage_tokens, .counted_tokens, .disagreeing, .above_max_tokens]' <<<"$l")" = "[6,$2,120,$3,$4]" ] ||
                fail "$1: usage_check $(jq -c .usage_check <<<"$l")"
}
expect_check honest 120 0 0
expect_check million 6000000 6 6
expect_check hundredfold 12000 6 6
expect_check inflated 192 6 0
# the honest cell has no warning about usage; each liar's level says so
jq -e '[.cells[] | select(.axes.usage == "honest") | .bench[].warnings[] | select(test("usage disagrees"))] | length == 0' \
        "$tmp/r.json" >/dev/null || fail "the honest cell was said to disagree"
jq -e '[.cells[] | select(.axes.usage != "honest") | .bench[] | [.warnings[] | select(test("^usage disagrees with gauntlet.s count on 6 of 6 requests"))] | length == 1] | all' \
        "$tmp/r.json" >/dev/null || fail "a liar's level has no warning: $(jq -c '[.cells[].bench[].warnings]' "$tmp/r.json")"
# the reports say it too, once per liar
id() { jq -r --arg c "$1" '.cells[] | select(.axes.usage == $c) | .id' "$tmp/r.json"; }
"$GAUNTLET" report "$tmp/j.db" >"$tmp/r.txt"
"$GAUNTLET" report --format markdown "$tmp/j.db" >"$tmp/r.md"
"$GAUNTLET" report --format html "$tmp/j.db" >"$tmp/r.html"
for f in txt md html; do
        [ "$(grep -c "usage disagrees with gauntlet" "$tmp/r.$f")" -ge 3 ] || fail "r.$f does not show the three liars"
done
grep -q "^$(id million): usage disagrees with gauntlet's count: @1 the server said 6000000 output tokens on 6 requests (6 disagreeing, 6 above max_tokens), gauntlet counted 120" "$tmp/r.txt" ||
        { cat "$tmp/r.txt"; fail "the text report does not show the million liar's disagreement"; }
grep -q "^$(id honest): usage" "$tmp/r.txt" && fail "the text report notes the honest cell"
expect_none_alive "processes left" 5
echo "bench-usage.sh: all good"

#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# search-spellings.sh -- an axis of maps is read by what its values set (docs/search.md, "How
# evidence is read"): its values are named `fast`, `slow` and `new`, and set the environment
# key IMPL to impl_fast, impl_slow and impl_sm100. `new` dies at load with a line that names
# impl_sm100, as an engine names what it was given, not the matrix's name for it. With a
# budget of 8 launches in 16 cells: `new` is launched once (its line condemns it), its pruned
# cells quote the line, and the journal keeps how each value is written, but for impl_fast,
# which `again` writes too (a spelling two values share tells neither).
. "$SRCDIR/tests/lib.sh"
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --host, "{host}", --launch-log, "$tmp/launches"]
startup_timeout: 10s
stop_timeout: 2s
axes:
  impl:
    values:
      - {name: slow, env: {IMPL: impl_slow}, args: [--token-delay-ms, "20"]}
      - {name: new, env: {IMPL: impl_sm100}, args: [--die-at-load, --log, "RuntimeError: impl_sm100 kernels are built for SM100 only"]}
      - {name: fast, env: {IMPL: impl_fast}, args: [--token-delay-ms, "5"]}
      - {name: again, env: {IMPL: impl_fast}, args: [--token-delay-ms, "30"]}
  x:
    flag: --model
    values: [m1, m2, m3, m4]
strategy: search
budget: {launches: 8}
checks: default
bench: {concurrency: [1], input_tokens: 8, output_tokens: 16, requests: 2}
objective: output_tokens_per_s@1
emit: []
YAML
run_search_report
held=$(grep -E '^\[launch' "$tmp/out" | grep -c -- "impl=new " || true)
[ "$held" = 1 ] || fail "impl=new launched in $held cells; its first line names it (impl_sm100)"
why=$(jq -r '.cells[] | select(.cause == "pruned" and .axes.impl == "new") | .evidence' "$tmp/r.json")
printf '%s\n' "$why" | head -1
printf '%s\n' "$why" | grep -q 'impl=new is named by the line of cell .*impl_sm100 kernels' ||
        fail "the pruned impl=new cells: $(printf '%s\n' "$why" | head -2)"
best=$(jq -r .best "$tmp/r.json")
[ "$(jq -r --arg b "$best" '.cells[] | select(.id == $b) | .axes.impl' "$tmp/r.json")" = fast ] ||
        fail "best: $(jq -c --arg b "$best" '.cells[] | select(.id == $b) | .axes' "$tmp/r.json")"
command -v sqlite3 >/dev/null || fail "sqlite3 is needed"
search=$(sqlite3 "$tmp/j.db" "SELECT search FROM sweeps ORDER BY id DESC LIMIT 1")
echo "journaled: $search"
[ "$(printf '%s' "$search" | jq -c '.flags[0], .spellings[0]' | tr '\n' ' ')" = '"IMPL" [["impl_slow","slow"],["impl_sm100","new"]] ' ] ||
        fail "the journaled flag and spellings of impl: $(printf '%s' "$search" | jq -c '.flags, .spellings')"
echo "impl=new launched once; its pruned cells quote its line; best impl=fast"

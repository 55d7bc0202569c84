#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# search-sizes.sh -- sizes and memory (docs/search.md, "Memory"), on the fixture: a space of
# 3 x 5 x 2 cells whose seqs axis (a count of sequences, 16 to 256) runs out of memory at
# load past 16 ("torch.OutOfMemoryError: CUDA out of memory"), whatever the other two axes
# hold, and whose attn axis sets the speed:
#   - no cell is launched after one that ran out of memory with the same attn and graph and
#     fewer seqs;
#   - at most 12 launches run out of memory, half the 24 cells that would (10 when written;
#     the search before this rule launched all 24);
#   - the cells of seqs=16 launched pass, the best is the fastest of them, and the cells
#     pruned so quote the cell that ran out;
#   - where each count's line says the size it failed to allocate, at most 7 launches run
#     out (two cells of one size and partners apart show the partners cannot save it);
#   - where every cell runs out, seqs=16 included, the search stops within 3 launches and
#     says that nothing in the matrix explains it (seqs at its smallest).
. "$SRCDIR/tests/lib.sh"
oom='"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"'
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --host, "{host}", --pid-file, "$tmp/pids-{port}"]
startup_timeout: 10s
stop_timeout: 2s
probes: false
axes:
  attn:
    values:
      - {name: flashinfer, args: [--token-delay-ms, "1"]}
      - {name: triton, args: [--token-delay-ms, "4"]}
      - {name: fa3, args: [--token-delay-ms, "8"]}
  seqs:
    values:
      - {name: "16", args: []}
      - {name: "32", args: [--load-time, "0.2", --exit-code, "3", --die-at-load, --log, $oom]}
      - {name: "64", args: [--load-time, "0.2", --exit-code, "4", --die-at-load, --log, $oom]}
      - {name: "128", args: [--load-time, "0.2", --exit-code, "5", --die-at-load, --log, $oom]}
      - {name: "256", args: [--load-time, "0.2", --exit-code, "6", --die-at-load, --log, $oom]}
  graph:
    values:
      - {name: "on", args: []}
      - {name: "off", args: [--no-reuseaddr]}
strategy: search
checks: default
bench: {concurrency: [1], output_tokens: 8, requests: 2, warmup: 0}
objective: output_tokens_per_s@1
emit: []
YAML
# run_sizes YAML NAME: runs the search of YAML (journal NAME.db, output NAME.out), sets
# $order (its launches) and $oom_launches, and holds it to the rule of sizes on seqs
run_sizes() {
        local rc=0
        "$GAUNTLET" run "$1" --journal "$tmp/$2.db" >"$tmp/$2.out" 2>&1 || rc=$?
        [ "$rc" = 0 ] || fail "exit $rc ($2): $(cat "$tmp/$2.out")"
        grep -E '^\[launch|^search' "$tmp/$2.out" || true
        order=$(grep -E '^\[launch [0-9]+' "$tmp/$2.out" | sed -E 's/^\[launch ([0-9]+)[^]]*\] +//')
        expect_sizes_respected "$order" seqs
}
run_sizes "$tmp/m.yaml" j
n=$(printf '%s\n' "$order" | wc -l)
echo "launched $n, $oom_launches ran out of memory"
[ "$oom_launches" -ge 1 ] || fail "no launch ran out of memory"
[ "$oom_launches" -le 12 ] || fail "$oom_launches launches ran out of memory (at most 12)"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json"
bad=$(jq -r '.cells[] | select(.axes.seqs == "16" and .verdict != "pass" and .verdict != "skipped") | .id' "$tmp/r.json")
[ -z "$bad" ] || fail "cells of seqs=16 did not pass: $bad"
jq -e '.cells[] | select(.id == $b) | .axes.seqs == "16" and .axes.attn == "flashinfer"' --arg b "$(jq -r .best "$tmp/r.json")" \
        "$tmp/r.json" >/dev/null || fail "the best is not the fastest cell of seqs=16: $(jq -r .best "$tmp/r.json")"
pruned=$(jq '[.cells[] | select(.cause == "pruned" and ((.evidence // "") | test("ran out of memory with these values but seqs=")))] | length' "$tmp/r.json")
echo "pruned past a cell that ran out: $pruned"
[ "$pruned" -ge 1 ] || fail "no cell was pruned for its sizes"
expect_none_alive "fixture servers left"

# --- the lines say the size of the allocation that failed, as llama.cpp's and PyTorch's do
# (docs/search.md, "The allocation that failed"): each count of sequences fails at its own
# size, whatever attn and graph are. Two cells of one size that differ on those show that
# they cannot save it, and the cells past them are not launched: at most 7 launches run out
# (6 in five runs when written, where the one line for all gave 9 to 11 in the same runs)
sized=$tmp/sized.yaml
cp "$tmp/m.yaml" "$sized"
for v in 32:0.50 64:1.00 128:2.00 256:4.00; do
        sed -i -e "/{name: \"${v%%:*}\", args:/s/Tried to allocate 2.00 GiB/Tried to allocate ${v#*:} GiB/" "$sized"
done
[ "$(grep -c 'Tried to allocate' "$sized")" = 4 ] && ! grep -q '2.00 GiB.*2.00 GiB' "$sized" && grep -q '0.50 GiB' "$sized" ||
        fail "the sized matrix: $(cat "$sized")"
run_sizes "$sized" sized
echo "sized lines: launched $(printf '%s\n' "$order" | wc -l), $oom_launches ran out of memory"
[ "$oom_launches" -ge 2 ] || fail "$oom_launches launches ran out of memory with sized lines: the rule needs two"
[ "$oom_launches" -le 7 ] || fail "$oom_launches launches ran out of memory with sized lines (at most 7)"
"$GAUNTLET" report --format json "$tmp/sized.db" >"$tmp/sized.json"
jq -e --arg b "$(jq -r .best "$tmp/sized.json")" '.cells[] | select(.id == $b) | .axes.seqs == "16" and .axes.attn == "flashinfer"' \
        "$tmp/sized.json" >/dev/null || fail "the best is not the fastest cell of seqs=16 (sized lines)"
by=$(jq '[.cells[] | select(.cause == "pruned" and ((.evidence // "") | test("the allocation that failed .*Tried to allocate [0-9.]+ GiB.* failed at one size in cells that differ on")))] | length' "$tmp/sized.json")
echo "pruned by the allocation that failed: $by"
[ "$by" -ge 1 ] || fail "no cell was pruned by the allocation that failed"
expect_none_alive "fixture servers left"

# --- every cell runs out, the smallest count of sequences included (the model does not
# fit): the search stops within 3 launches, its line saying so, where the sizes rule alone
# left it to try every other partner at the smallest size (6 launches, "no candidate left")
sed -e 's|^command: \[\(.*\)\]$|command: [\1, --load-time, "0.2", --die-at-load, --log, '"$oom"']|' \
        -e 's|{name: "16", args: \[\]}|{name: "16", args: [--exit-code, "2"]}|' "$tmp/m.yaml" >"$tmp/all.yaml"
grep -q 'die-at-load, --log' "$tmp/all.yaml" || fail "the matrix of the second part: $(cat "$tmp/all.yaml")"
rc=0
"$GAUNTLET" run "$tmp/all.yaml" --journal "$tmp/all.db" >"$tmp/allout" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "exit $rc where no cell can pass: $(cat "$tmp/allout")"
grep -E '^\[launch|^search' "$tmp/allout" || true
n=$(grep -c '^\[launch ' "$tmp/allout")
[ "$n" -le 3 ] || fail "$n launches where every cell runs out of memory (at most 3)"
grep -q '^search: stopped after [0-9]* launches: every one of the [0-9]* launched cells crashed (oom) with one line, over different values of every axis (seqs at its smallest: a larger size needs no less memory)' "$tmp/allout" ||
        fail "the stop line: $(grep '^search' "$tmp/allout")"
"$GAUNTLET" report --format json "$tmp/all.db" >"$tmp/all.json"
[ "$(jq -r .search.stopped "$tmp/all.json")" = "nothing can pass" ] || fail "search.stopped: $(jq .search.stopped "$tmp/all.json")"
expect_none_alive "fixture servers left"
echo "ok"

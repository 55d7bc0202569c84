#!/usr/bin/env bash
# tier: engine (tests/run engine)
# search-alloc-llamacpp.sh -- the allocation that failed (docs/search.md) where its size
# depends on several axes, on the real llama-server (skipped, by name, without one), run
# through a wrapper that limits its address space to 800 MB (ulimit -v, one malloc arena):
# the 24-cell space of tests/engines/llamacpp/search-alloc.yaml, whose large micro-batches
# run out allocating the compute buffer at -c 32768, at sizes that -ub and -fa set (two cells
# of other cache types fail at one size there, two others 10 MB apart), and -fa on saves
# -ub 4096. The grid first, for the truth, then the search with budget: {launches: 24}:
#   - the grid: 6 cells run out, at three sizes or more, and two of them at one size that
#     differ on the cache type (the space tests what it is for);
#   - the search: no cell it did not launch is predicted to run out of memory where the
#     grid saw it serve (a rule that took the cache type, or -fa, for an axis that cannot
#     save a cell would prune -fa on beside -ub 4096); at most 5 launches run out (3-4 in
#     four runs when written); the best is a cell that passed.
. "$SRCDIR/tests/lib.sh"
limit_llama_server search-alloc-llamacpp
llama_matrix search-alloc 'strategy: grid' grid
jq -r '.cells[] | select(.verdict == "crash") | "\(.axes.ctx) \(.axes.kv) \(.axes.ub) \(.axes.attn) \(.cause): \(.evidence)"' "$tmp/grid.json"
oom=$(jq '[.cells[] | select(.verdict == "crash" and .cause == "oom")] | length' "$tmp/grid.json")
[ "$oom" = 6 ] || fail "the grid: $oom cells ran out of memory, not 6"
sizes=$(jq -r '.cells[] | select(.cause == "oom") | .evidence' "$tmp/grid.json" | grep -o 'allocate [0-9.]* MB' | sort -u | wc -l)
[ "$sizes" -ge 3 ] || fail "the grid: $sizes sizes of allocation, not 3 or more"
kv_alike=$(jq -r '.cells[] | select(.cause == "oom") | "\(.axes.ctx) \(.axes.ub) \(.axes.attn) \(.evidence)"' "$tmp/grid.json" |
        sed -E 's/^([^ ]+ [^ ]+ [^ ]+) .*(allocate [0-9.]+ MB).*/\1 \2/' | sort | uniq -d | wc -l)
[ "$kv_alike" -ge 1 ] || fail "the grid: no two cells of other cache types ran out at one size"
llama_matrix search-alloc 'strategy: search\nbudget: {launches: 24}' search
grep -E '^\[launch|^search' "$tmp/search.out" || true
# every cell the search predicted to run out: the grid's verdict for it
served=$(jq -r '.cells[] | select(.cause == "pruned" and ((.evidence // "") | test("predicted crash [(]oom[)]"))) | .id' "$tmp/search.json" |
        while read -r id; do
                jq -r --arg id "$id" '.cells[] | select(.id == $id and .verdict == "pass") | "\(.axes.ctx) \(.axes.kv) \(.axes.ub) \(.axes.attn)"' "$tmp/grid.json"
        done)
[ -z "$served" ] || fail "predicted to run out of memory, and served in the grid: $served"
by=$(jq '[.cells[] | select(.cause == "pruned" and ((.evidence // "") | test("predicted crash [(]oom[)]")))] | length' "$tmp/search.json")
n_oom=$(grep -cE '^\[launch [0-9]+.* crash/oom ' "$tmp/search.out" || true)
echo "search: $n_oom launches ran out of memory, $by cells predicted to"
[ "$n_oom" -le 5 ] || fail "$n_oom launches ran out of memory (at most 5)"
expect_best_passed "$tmp/search.json"
echo "ok"

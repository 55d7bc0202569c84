#!/usr/bin/env bash
# tier: engine (tests/run engine)
# search-sizes-llamacpp.sh -- sizes and memory (docs/search.md, "Memory") on the real
# llama-server (skipped, by name, without one), run through a wrapper that limits its
# address space to 800 MB (ulimit -v, one malloc arena): the 32-cell space of
# tests/engines/llamacpp/search-sizes.yaml, whose contexts of 1048576 and 4194304 tokens run
# out of memory at load ("ggml_aligned_malloc: insufficient memory"), 16 cells of 32, with
# budget: {launches: 32}:
#   - no cell is launched after one that ran out of memory with the same cache type and -fa
#     and no larger -c and -ub;
#   - at most 8 launches run out of memory, of the 16 cells that would: 5 to 8 in sixteen
#     runs (2026-12-07, most beside two processes keeping both CPUs busy). The search reads
#     the size each line says it failed to allocate (docs/search.md, "The allocation that
#     failed"): the KV cache's, the same whatever -ub and -fa are; an axis shown so at one
#     size counts at that size and larger ones only (a smaller allocation may fit in the
#     room another value leaves: search-headroom-llamacpp.sh), which costs a launch here
#     where what 2560 MB showed of -fa held at 1280 MB too. Carried to every size, 4 to 6 in
#     fifteen runs under a bound of 7; before the sizes were read, 6 to 9 in six runs (9 or
#     10 under load) under a bound of 10. Every one of the 16 runs out at load as such
#     ("insufficient memory") with one malloc arena; without it the 4194304-token cells
#     exited on std::bad_alloc instead and were not counted. The search before the rule of
#     sizes: 14 of 25 launches;
#   - the cells pruned so quote the cell that ran out (how many by the allocation that
#     failed is said, 0 to 7 in those runs: where the larger sizes came first, the rule of
#     sizes had pruned its cells already); the best is a cell that passed.
. "$SRCDIR/tests/lib.sh"
# One malloc arena (limit_llama_server): glibc reserves 64 MB of address space for each
# thread's own arena, and with llama-server's HTTP threads answering side by side its peak was
# 1005 MB (352 MB with one arena; ctx=16384 kv=f32 ub=512 attn=off, eight requests at once),
# past the limit. That cell, which fits, ran out at load in one run of the suite (2026-12-07),
# by when its threads came.
limit_llama_server search-sizes-llamacpp
run_llama_space search-sizes 32
grep -E '^\[launch|^search' "$tmp/out" || true
order=$(grep -E '^\[launch [0-9]+' "$tmp/out" | sed -E 's/^\[launch ([0-9]+)[^]]*\] +//')
expect_sizes_respected "$order" ctx ub
n=$(printf '%s\n' "$order" | wc -l)
echo "launched $n, $oom_launches ran out of memory"
[ "$oom_launches" -ge 1 ] || fail "no launch ran out of memory: the space does not test what it is for"
[ "$oom_launches" -le 8 ] || fail "$oom_launches launches ran out of memory (at most 8)"
small=$(printf '%s\n' "$order" | grep -E '^ctx=(256|16384) .* crash/' || true)
[ -z "$small" ] || fail "a cell of a small context crashed: $small"
unsaid=$(printf '%s\n' "$order" | grep ' crash/oom ' | grep -v 'insufficient memory' || true)
[ -z "$unsaid" ] || fail "a cell that ran out of memory without the engine's line: $unsaid"
"$GAUNTLET" report --format json "$tmp/m.db" >"$tmp/r.json"
pruned=$(jq '[.cells[] | select(.cause == "pruned" and ((.evidence // "") | test("ran out of memory with these values but")))] | length' "$tmp/r.json")
echo "pruned past a cell that ran out: $pruned"
[ "$pruned" -ge 1 ] || fail "no cell was pruned for its sizes"
by=$(jq '[.cells[] | select(.cause == "pruned" and ((.evidence // "") | test("the allocation that failed [(]\"[^\"]*attempted to allocate [0-9.]+ MB[)]\"[)] failed at one size in cells that differ on")))] | length' "$tmp/r.json")
echo "pruned by the allocation that failed: $by"
expect_best_passed "$tmp/r.json"
echo "ok"

#!/usr/bin/env bash
# tier: engine (tests/run engine)
# search-headroom-llamacpp.sh -- the allocation that failed (docs/search.md) where the same
# allocation fails or fits by what another left, on the real llama-server (skipped, by name,
# without one), under 800 MB of address space (ulimit -v, one malloc arena): the 12 cells of
# tests/engines/llamacpp/search-headroom.yaml. The compute buffer at -c 131072 (2128.19 MB)
# fails in either cache type, which shows the cache type does not change its size; at -c 32768
# (587.69 MB) the f32 cache leaves too little and the f16 one enough. A rule that carried what
# one size showed to another would predict -c 32768 f16 to run out and never launch it. The
# grid first, for the truth; then, in a journal of its own, the grid without -c 32768 f16 and
# without one -c 131072 f16 cell (exclude), so that the search that follows on that journal
# (the exclusion lifted, budget: {launches: 12}, three more than the grid spent) decides on
# those three cells knowing the same failures every time:
#   - the grid: 6 cells run out, two of them at one size that differ on the cache type, and
#     a cell serves at a size where another cache type ran out (the space tests what it is for);
#   - the search: the -c 131072 f16 cell is predicted to run out by the allocation that failed
#     (its mmap is shown alike at 2128.19 MB) and not launched; no cell it predicted to run out
#     served in the grid; it launched a -c 32768 f16 cell; the best it names passed.
. "$SRCDIR/tests/lib.sh"
limit_llama_server search-headroom-llamacpp
llama_matrix search-headroom 'strategy: grid' grid
jq -r '.cells[] | "\(.axes.ctx) \(.axes.kv) \(.axes.mmap) \(.verdict) \(.cause // "") \(.evidence // "")"' "$tmp/grid.json"
oom=$(jq '[.cells[] | select(.verdict == "crash" and .cause == "oom")] | length' "$tmp/grid.json")
[ "$oom" = 6 ] || fail "the grid: $oom cells ran out of memory, not 6"
alike=$(jq -r '.cells[] | select(.cause == "oom") | "\(.axes.ctx) \(.axes.mmap) \(.evidence)"' "$tmp/grid.json" |
        sed -E 's/^([^ ]+ [^ ]+) .*(allocate [0-9.]+ MB).*/\1 \2/' | sort | uniq -d | wc -l)
[ "$alike" -ge 1 ] || fail "the grid: no two cells of other cache types ran out at one size"
room=$(jq -r '.cells[] | select(.axes.ctx == "32768" and .axes.kv == "f16" and .verdict == "pass") | .id' "$tmp/grid.json" | wc -l)
[ "$room" -ge 1 ] || fail "the grid: -c 32768 with the f16 cache did not serve"
llama_matrix search-headroom 'strategy: grid\nexclude: [{ctx: "32768", kv: f16}, {ctx: "131072", kv: f16, mmap: no-mmap}]' seed search
llama_matrix search-headroom 'strategy: search\nbudget: {launches: 12}' search search
grep -E '^\[launch|^search' "$tmp/search.out" || true
served=$(jq -r '.cells[] | select(.cause == "pruned" and ((.evidence // "") | test("predicted crash [(]oom[)]"))) | .id' "$tmp/search.json" |
        while read -r id; do
                jq -r --arg id "$id" '.cells[] | select(.id == $id and .verdict == "pass") | "\(.axes.ctx) \(.axes.kv) \(.axes.mmap)"' "$tmp/grid.json"
        done)
[ -z "$served" ] || fail "predicted to run out of memory, and served in the grid: $served"
by=$(jq -r '.cells[] | select(.cause == "pruned" and ((.evidence // "") | test("the allocation that failed .* failed at one size in cells that differ on"))) | "\(.axes.ctx) \(.axes.kv) \(.axes.mmap)"' "$tmp/search.json")
echo "pruned by the allocation that failed: ${by:-none}"
[ "$by" = "131072 f16 no-mmap" ] || fail "pruned by the allocation that failed: ${by:-none}, not the -c 131072 f16 no-mmap cell"
tried=$(jq '[.cells[] | select(.axes.ctx == "32768" and .axes.kv == "f16" and .cause != "pruned" and .verdict != null)] | length' "$tmp/search.json")
n_oom=$(grep -cE '^\[launch [0-9]+.* crash/oom ' "$tmp/search.out" || true)
echo "search: $n_oom of its launches ran out of memory; -c 32768 f16 launched in $tried cells"
[ "$tried" -ge 1 ] || fail "the search never launched -c 32768 with the f16 cache"
expect_best_passed "$tmp/search.json"
echo "ok"

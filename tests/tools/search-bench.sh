#!/usr/bin/env bash
# tests/tools/search-bench.sh -- gauntlet-search-bench's options: --budget-only runs the
# budgeted rows alone; --one-slot leaves out the rows with K = 4 and 8; --budget-only and
# --trace-budget refuse a share of 0; --trace-budget (and --budget-only with --space) prints
# the budgeted search's launches, as many as its summary says; a list's output is the same
# on 1 thread and on 2; --space-file reads spaces written apart (one JSON object a line),
# traces one by its name with the list's noise, and refuses a malformed line or an unknown
# name in one line.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
bin="$here/${BUILD:-build}/bin/gauntlet-search-bench"
[ -x "$bin" ] || { echo "FAIL: $bin is not built"; exit 1; }
fail() { echo "FAIL: $*"; exit 1; }

rc=0
out=$("$bin" --budget-only --budget-share 0 2>&1) || rc=$?
[ "$rc" -eq 2 ] || fail "--budget-only with a share of 0 exited $rc"
grep -q -- '--budget-only needs a --budget-share above 0' <<<"$out" || fail "no one-line reason: $out"
rc=0
out=$("$bin" --space 3 --trace-budget --budget-share 0 2>&1) || rc=$?
[ "$rc" -eq 2 ] || fail "--trace-budget with a share of 0 exited $rc"
grep -q -- '--trace-budget needs a --budget-share above 0' <<<"$out" || fail "no one-line reason: $out"
echo "ok: --budget-only and --trace-budget refuse a share of 0"

one=$("$bin" --spaces 3 --seed 7 --min-cells 200 --budget-only --jobs 1 2>/dev/null)
two=$("$bin" --spaces 3 --seed 7 --min-cells 200 --budget-only --jobs 2 2>/dev/null)
[ "$one" = "$two" ] || fail "--jobs 1 and --jobs 2 differ"
grep -qE '^  search \(budget 10%\) +[0-9.]+%' <<<"$one" || fail "no budgeted search row: $one"
! grep -qE '^  search +[0-9.]+%' <<<"$one" || fail "--budget-only ran the search without a budget"
! grep -q 'side by side' <<<"$one" || fail "--budget-only ran the rows side by side"
echo "ok: --budget-only runs the budgeted rows alone, the same on 1 and 2 threads"

nob=$("$bin" --spaces 3 --seed 7 --min-cells 200 --budget-share 0 --one-slot --jobs 2 2>/dev/null)
grep -qE '^  search +[0-9.]+%' <<<"$nob" || fail "--one-slot: no search row: $nob"
grep -qE '^  search, K = 1 ' <<<"$nob" || fail "--one-slot: no K = 1 row: $nob"
! grep -qE 'K = [48]' <<<"$nob" || fail "--one-slot ran K = 4 or 8: $nob"
echo "ok: --one-slot leaves out the rows with K = 4 and 8"

trace=$("$bin" --space 3 --budget-share 0.1 --trace-budget 2>/dev/null)
launches=$(grep -E '^  search \(budget 10%\) ' <<<"$trace" | grep -oE '[0-9]+ launches' | grep -oE '^[0-9]+')
steps=$(awk '/^search trajectory/{on=1; next} on && /^ +[0-9]+ +cell /{n++} on && /^$/{exit} END{print n+0}' <<<"$trace")
[ "${launches:-0}" -gt 0 ] || fail "no budgeted search in the summary: $trace"
[ "$steps" -eq "$launches" ] || fail "--trace-budget printed $steps launches, the summary says $launches"
plain=$("$bin" --space 3 --budget-share 0.1 2>/dev/null)
nb=$(grep -E '^  search +(success|FAIL) ' <<<"$plain" | grep -oE '[0-9]+ launches' | grep -oE '^[0-9]+')
psteps=$(awk '/^search trajectory/{on=1; next} on && /^ +[0-9]+ +cell /{n++} on && /^$/{exit} END{print n+0}' <<<"$plain")
[ "$psteps" -eq "$nb" ] || fail "without --trace-budget the trajectory has $psteps launches, the search $nb"
only=$("$bin" --space 3 --budget-share 0.1 --budget-only 2>/dev/null)
osteps=$(awk '/^search trajectory/{on=1; next} on && /^ +[0-9]+ +cell /{n++} on && /^$/{exit} END{print n+0}' <<<"$only")
[ "$osteps" -eq "$launches" ] || fail "--space with --budget-only printed $osteps launches, not the budgeted $launches"
echo "ok: --trace-budget prints the budgeted search's $launches launches (the search without a budget: $nb)"

# --space-file: two spaces of 36 cells, written here
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp/spaces.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as out:
    for name, fast in (("alpha", 2), ("beta", 1)):
        axes = [{"name": "attn", "flag": "--attention-backend", "values": ["auto", "fa3", "triton", "flashinfer"]},
                {"name": "kv", "flag": "--kv-cache-dtype", "values": ["auto", "fp8_e4m3", "bf16"]},
                {"name": "bs", "flag": "--cuda-graph-max-bs", "values": ["auto", "64", "256"]}]
        cells = []
        for a in range(4):
            for k in range(3):
                for b in range(3):
                    c = {"s": round(100 * (1.3 if a == fast else 1) * (1.1 if k == 1 else 1) * (1 + 0.05 * b), 2)}
                    if a == 3 and k == 1:
                        c.update({"fail": "crash/config", "line": "ValueError: FlashInfer backend does not support fp8_e4m3 KV cache"})
                    cells.append(c)
        out.write(json.dumps({"name": name, "engine": "sglang", "noise": 0.02, "axes": axes, "cells": cells}) + "\n")
PY
one=$("$bin" --space-file "$tmp/spaces.jsonl" --budget-share 0.2 --budget-only --jobs 1 --verbose 2>/dev/null)
two=$("$bin" --space-file "$tmp/spaces.jsonl" --budget-share 0.2 --budget-only --jobs 2 --verbose 2>/dev/null)
[ "$one" = "$two" ] || fail "--space-file: --jobs 1 and --jobs 2 differ"
grep -q "^2 spaces from $tmp/spaces.jsonl" <<<"$one" || fail "--space-file: not the file's 2 spaces: $one"
grep -qE '^  search \(budget 20%\) +[0-9.]+%' <<<"$one" || fail "--space-file: no budgeted search row: $one"
trace=$("$bin" --space-file "$tmp/spaces.jsonl" --space beta --budget-share 0.2 --trace-budget 2>/dev/null)
grep -q '^space beta: 36 cells (4x3x3)' <<<"$trace" || fail "--space beta: not that space: $trace"
grep -q '^true best: cell 14, ' <<<"$trace" || fail "--space beta: not its best (fa3, fp8_e4m3, 256): $trace"
launches=$(grep -E '^  search \(budget 20%\) ' <<<"$trace" | grep -oE '[0-9]+ launches' | grep -oE '^[0-9]+')
steps=$(awk '/^search trajectory/{on=1; next} on && /^ +[0-9]+ +cell /{n++} on && /^$/{exit} END{print n+0}' <<<"$trace")
[ "${launches:-0}" -gt 0 ] && [ "$steps" -eq "$launches" ] || fail "--space beta: $steps launches traced, $launches summed"
rc=0
out=$("$bin" --space-file "$tmp/spaces.jsonl" --space delta --budget-share 0.2 2>&1) || rc=$?
[ "$rc" -eq 1 ] && grep -q "holds no space named 'delta'" <<<"$out" || fail "an unknown name: rc $rc: $out"
printf '%s\n' '{"name": "gamma", "axes": [{"name": "a", "values": ["auto", "b"]}], "cells": [{"s": 1}]}' >>"$tmp/spaces.jsonl"
rc=0
out=$("$bin" --space-file "$tmp/spaces.jsonl" --budget-share 0.2 --budget-only 2>&1) || rc=$?
[ "$rc" -eq 1 ] || fail "a malformed space exited $rc"
grep -q "spaces.jsonl, line 3: \"cells\" must hold 2 cells" <<<"$out" || fail "no one-line reason for line 3: $out"
rc=0
out=$("$bin" --space delta 2>&1) || rc=$?
[ "$rc" -eq 2 ] && grep -q "a name needs --space-file" <<<"$out" || fail "a name without a file: rc $rc: $out"
echo "ok: --space-file reads spaces written apart, traces one by its name, and refuses a bad line or name"


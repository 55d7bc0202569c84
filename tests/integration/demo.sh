#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# demo.sh -- the sweep, the gate and the bench against the real testbed server: the demo
# matrix (examples/demo.yaml, emulated sm_120) must show every failure class for its real
# reason, pass the good backends, benchmark them, and pick a winner that passed.
set -euo pipefail
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$SRCDIR/tests/assert.sh"

PATH="$(dirname "$TESTBED"):$PATH" "$GAUNTLET" run "$SRCDIR/examples/demo.yaml" --journal "$tmp/demo.db" \
        >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "the demo sweep found no passing cell"; }
cat "$tmp/out"
"$GAUNTLET" report --format json "$tmp/demo.db" >"$tmp/r.json"
v() { jq -r --arg m "$1" --arg g "$2" --arg k "${3:-bf16}" '.cells[] | select(.axes.moe == $m and .axes.gemm == $g and .axes.kv == $k) | "\(.verdict) \(.cause // "-")"' "$tmp/r.json"; }
[ "$(v nvfp4 nvfp4)" = "pass -" ] || fail "nvfp4/nvfp4: $(v nvfp4 nvfp4)"
[ "$(v reference nvfp4)" = "pass -" ] || fail "reference/nvfp4: $(v reference nvfp4)"
[ "$(v tcgen05 nvfp4)" = "crash arch" ] || fail "tcgen05: $(v tcgen05 nvfp4)"
[ "$(v shuffled nvfp4)" = "crash oom" ] || fail "shuffled: $(v shuffled nvfp4)"
case "$(v nvfp4-swizzled nvfp4)" in garbage*) ;; *) fail "nvfp4-swizzled on sm_120: $(v nvfp4-swizzled nvfp4)" ;; esac
case "$(v auto nvfp4)" in garbage*) ;; *) fail "auto on sm_120 should pick the broken swizzled path: $(v auto nvfp4)" ;; esac
case "$(v fp16acc nvfp4)" in garbage* | wrong*) ;; *) fail "fp16acc: $(v fp16acc nvfp4)" ;; esac
# the seed's !!!! for auto, and a probe catching what the short checks cannot: the FP8 KV
# cache breaks from the third turn of a conversation only
jq -e '.cells[] | select(.axes.moe == "auto") | .evidence | test("!!!!")' "$tmp/r.json" >/dev/null ||
        fail "auto on sm_120 does not answer !!!!"
[ "$(v nvfp4 nvfp4 fp8)" = "garbage repeat" ] || fail "kv fp8: $(v nvfp4 nvfp4 fp8)"
jq -e '.cells[] | select(.axes.kv == "fp8") | (.evidence | startswith("turn 3:")) and
        ([.checks[] | select(.name | startswith("multi-turn")) | .verdict] | any(. == "garbage")) and
        ([.checks[] | select(.name == "ok" or .name == "math") | .verdict] | all(. == "pass"))' "$tmp/r.json" >/dev/null ||
        fail "the multi-turn probe did not catch kv fp8 (or a short check failed first)"
# no line about the testbed's own usage or metrics (first contact without noise)
! grep -E "usage disagrees|has none of the series" "$tmp/out" || fail "the demo complains about its own testbed"
"$GAUNTLET" report "$tmp/demo.db" >"$tmp/report.txt"
! grep -E "usage disagrees|has none of the series" "$tmp/report.txt" || fail "the demo's report complains about its own testbed"
# the passing cells were benchmarked, and the winner is one of them
jq -e '[.cells[] | select(.verdict == "pass") | (.bench | length) > 0] | all' "$tmp/r.json" >/dev/null ||
        fail "a passing cell has no bench figures"
jq -e '.best as $b | [.cells[] | select(.id == $b and .verdict == "pass")] | length == 1' "$tmp/r.json" >/dev/null ||
        fail "the best cell did not pass"
# the passing cells answered 17 * 19 with 323, with and without thinking
jq -e '[.cells[] | select(.verdict == "pass") | .checks[] | select(.name | startswith("math")) | .output == "323"] | all' \
        "$tmp/r.json" >/dev/null || fail "a passing cell did not answer 323"
echo "demo.sh: all good"

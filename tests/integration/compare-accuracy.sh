#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# compare-accuracy.sh -- gauntlet compare's accuracy path end to end (docs/compare.md): a
# testbed sweep with an `eval:`, then an "upgrade" (a wrapper in place of gauntlet-testbed,
# as in compare.sh) whose nvfp4 backend gets a third of the eval's answers wrong
# (--wrong-answers 3, docs/testbed.md) while the smoke suite still passes:
#   - compare names nvfp4 an accuracy regression with the eval's two-proportion z-test (z
#     well below 0, p < 0.05, the counts as the eval gave them), the reference's accuracy
#     unchanged, exit 1; text and JSON agree;
#   - an unchanged run compared with the first: no accuracy change, exit 0.
. "$SRCDIR/tests/lib.sh"
command -v jq >/dev/null || fail "jq is needed"
G=$GAUNTLET
cat >"$tmp/engine" <<EOF
#!/bin/sh
# WRONG names the backend the "new build" makes less accurate
case " \$* " in
*" --moe-backend \${WRONG:-none} "*) exec "$TESTBED" "\$@" --wrong-answers 3;;
esac
exec "$TESTBED" "\$@"
EOF
chmod +x "$tmp/engine"
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$tmp/engine, --host, "{host}", --port, "{port}", --threads, "2"]
startup_timeout: 20s
request_timeout: 30s
stop_timeout: 5s
axes:
  moe:
    flag: --moe-backend
    values: [reference, nvfp4]
checks:
  - {name: math, prompt: "What is 17 * 19?", max_tokens: 24, expect: {regex: "323"}}
probes: false
eval: {builtin: [products], samples: 60}
emit: []
YAML
sweep() { # journal
        "$G" run "$tmp/m.yaml" --journal "$tmp/$1.db" >"$tmp/$1.out" 2>&1 || true
        [ -f "$tmp/$1.db" ] || { cat "$tmp/$1.out"; fail "$1: no journal"; }
}
cmp() { # old new -> $tmp/cmp.json, rc in $rc
        rc=0
        # without a bench the objective is the smoke suite's time, with no noise measured:
        # the speed is not what this script tests
        "$G" compare --format json --max-slowdown 1000% "$tmp/$1.db" "$tmp/$2.db" >"$tmp/cmp.json" \
                2>"$tmp/cmp.err" || rc=$?
}
cell() { jq -c --arg c "moe=$1" '.cells[] | select(.cell == $c)' "$tmp/cmp.json"; }

sweep old
[ "$(grep -c ' pass ' "$tmp/old.out")" = 2 ] || { cat "$tmp/old.out"; fail "the old build: two passes wanted"; }
WRONG=nvfp4 sweep new
grep -q "moe=nvfp4 .*pass" "$tmp/new.out" || { cat "$tmp/new.out"; fail "the new nvfp4 no longer passes the smoke suite"; }

cmp old new
[ "$rc" = 1 ] || fail "exit $rc after an upgrade that lost accuracy: $(cat "$tmp/cmp.err")"
jq -e '.summary.accuracy_drops == 1 and .summary.slower == 0' "$tmp/cmp.json" >/dev/null || fail "summary: $(jq -c .summary "$tmp/cmp.json")"
cell nvfp4 | jq -e '.accuracy.regression and .accuracy.significant and .accuracy.z < -3 and .accuracy.p < 0.05 and
        .accuracy.n_old == 60 and .accuracy.n_new == 60 and .accuracy.correct_old == 60 and
        .accuracy.correct_new < 50 and .accuracy.correct_new > 20' >/dev/null || fail "nvfp4: $(cell nvfp4)"
cell reference | jq -e '.accuracy.correct_old == .accuracy.correct_new and (.accuracy.significant | not) and
        (.accuracy.regression | not)' >/dev/null || fail "reference: $(cell reference)"
acc=$(cell nvfp4 | jq -r '.accuracy | "\(.correct_old)/\(.n_old) -> \(.correct_new)/\(.n_new), z \(.z), p \(.p)"')
k=$(cell nvfp4 | jq -r .accuracy.correct_new)
"$G" compare --max-slowdown 1000% "$tmp/old.db" "$tmp/new.db" >"$tmp/cmp.txt" && fail "text: exit 0"
grep -q "^  moe=nvfp4: .*accuracy 60/60 -> $k/60 (-[0-9.]* points, z -[0-9.]*, p [0-9.e-]*)" "$tmp/cmp.txt" ||
        { cat "$tmp/cmp.txt"; fail "text: the accuracy figures"; }

# an unchanged run: the same answers, no accuracy change
sweep again
cmp old again
[ "$rc" = 0 ] || fail "unchanged: exit $rc: $(jq -c '.summary, [.cells[].accuracy]' "$tmp/cmp.json")"
jq -e '[.cells[].accuracy | .significant] | all(. == false)' "$tmp/cmp.json" >/dev/null ||
        fail "unchanged: an accuracy change: $(jq -c '[.cells[].accuracy]' "$tmp/cmp.json")"
echo "compare-accuracy: nvfp4 $acc"

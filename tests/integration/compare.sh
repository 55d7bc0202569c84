#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# compare.sh -- gauntlet compare (docs/compare.md) on the testbed: an "upgrade" that breaks
# one backend and slows another, and runs of one unchanged matrix.
#   - the upgrade is a new engine build: a wrapper in place of gauntlet-testbed whose
#     nvfp4-swizzled kernel reads its scales the sm_120 way (garbage, docs/testbed.md) and
#     whose nvfp4 waits twice as long after each token; it says another --version;
#   - compare names exactly the broken backend a verdict regression and the slowed one a
#     speed regression outside the noise, the reference unchanged, the engine version's
#     change, exit 1; with --max-slowdown above the slowdown (an upgrade that only slows)
#     exit 0; bad usage exit 2;
#   - 11 runs of the unchanged matrix, each compared with the next: 10 of 10 no regression.
# Where this host's hypervisor and other processes took more than 5% of its CPU time during a bench, the slowed
# backend may be called inconclusive rather than slower, and an exit 0 or 1 on speed alone
# may be 3, but only with a disturbed cell to show for it (docs/compare.md "A disturbed host").
. "$SRCDIR/tests/lib.sh"
command -v jq >/dev/null || fail "jq is needed"
G=$GAUNTLET
cat >"$tmp/upgraded" <<EOF
#!/bin/sh
# the "new build": BREAK and SLOW say which of its changes it has
case " \$* " in
*" --version "*) echo "gauntlet-testbed 0.2.0-upgraded"; exit 0;;
*" --moe-backend nvfp4-swizzled "*) [ "\${BREAK:-1}" = 1 ] && exec "$TESTBED" "\$@" --device-arch sm_120;;
*" --moe-backend nvfp4 "*) [ "\${SLOW:-1}" = 1 ] && exec "$TESTBED" "\$@" --token-delay 180ms;;
esac
exec "$TESTBED" "\$@"
EOF
chmod +x "$tmp/upgraded"
matrix() { # program
        cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$1, --host, "{host}", --port, "{port}", --threads, "2", --token-delay, 60ms]
version_command: [$1, --version]
startup_timeout: 20s
request_timeout: 30s
stop_timeout: 5s
axes:
  moe:
    flag: --moe-backend
    values: [reference, nvfp4, nvfp4-swizzled]
checks:
  - {name: math, prompt: "What is 17 * 19?", max_tokens: 24, expect: {regex: "323"}}
probes: false
bench: {concurrency: [1], input_tokens: 16, output_tokens: 4, requests: 8}
objective: output_tokens_per_s@1
emit: []
YAML
}
sweep() { # journal
        "$G" run "$tmp/m.yaml" --journal "$tmp/$1.db" >"$tmp/$1.out" 2>&1 || true
        [ -f "$tmp/$1.db" ] || { cat "$tmp/$1.out"; fail "$1: no journal"; }
}
cmp() { # old new [flags...] -> $tmp/cmp.json, rc in $rc
        local a=$1 b=$2; shift 2
        rc=0
        "$G" compare --format json "$@" "$tmp/$a.db" "$tmp/$b.db" >"$tmp/cmp.json" 2>"$tmp/cmp.err" || rc=$?
}
cell() { jq -c --arg c "moe=$1" '.cells[] | select(.cell == $c)' "$tmp/cmp.json"; }
# This host's hypervisor, or other processes, may take CPU time during a bench (docs/compare.md "A disturbed
# host"): where a cell says so, its slowdown is inconclusive (exit 3) rather than decided.
disturbed() { jq -e '[.cells[].speed.disturbed] | any' "$tmp/cmp.json" >/dev/null; }

matrix "$TESTBED"
sweep old
[ "$(grep -c ' pass ' "$tmp/old.out")" = 3 ] || { cat "$tmp/old.out"; fail "the old build: three passes wanted"; }
matrix "$tmp/upgraded"
sweep new

# the upgrade: exactly the broken one a verdict regression, the slowed one slower
cmp old new --max-slowdown 25%
[ "$rc" = 1 ] || fail "exit $rc after an upgrade that broke a backend: $(cat "$tmp/cmp.err")"
jq -e '.summary.regressions == 1 and .summary.slower + .summary.inconclusive == 1 and .regressed' "$tmp/cmp.json" \
        >/dev/null || fail "summary: $(jq -c .summary "$tmp/cmp.json")"
cell nvfp4-swizzled | jq -e '.change == "regression" and .old.verdict == "pass" and .new.verdict == "garbage"' >/dev/null ||
        fail "the broken backend: $(cell nvfp4-swizzled)"
cell nvfp4 | jq -e '.change == "same" and (.speed.regression or .speed.inconclusive) and .speed.method == "bootstrap" and
        .speed.interval[1] < 0 and .speed.change < -0.25' >/dev/null || fail "the slowed backend: $(cell nvfp4)"
cell reference | jq -e '.change == "same" and (.speed.regression | not) and (.regression | not)' >/dev/null ||
        fail "the untouched backend: $(cell reference)"
jq -e '.provenance_changes | any(test("engine version: .*0\\.1\\.0 -> .*0\\.2\\.0-upgraded"))' "$tmp/cmp.json" \
        >/dev/null || fail "provenance: $(jq -c .provenance_changes "$tmp/cmp.json")"
slow=$(cell nvfp4 | jq -r '"\(.speed.change) \(.speed.interval[0]) \(.speed.interval[1])"')
# every format says it; the page escapes what it shows
"$G" compare --max-slowdown 25% "$tmp/old.db" "$tmp/new.db" >"$tmp/cmp.txt" && fail "text: exit 0"
grep -q "^  moe=nvfp4-swizzled: pass -> garbage/.* \[REGRESSION\]" "$tmp/cmp.txt" || { cat "$tmp/cmp.txt"; fail "text"; }
grep -E -q "^  moe=nvfp4: pass -> pass \[same\]; .* (SLOWER|INCONCLUSIVE)" "$tmp/cmp.txt" || fail "text: the slower cell"
"$G" compare --format markdown --max-slowdown 25% "$tmp/old.db" "$tmp/new.db" >"$tmp/cmp.md" && fail "markdown: exit 0"
grep -q "^| moe=nvfp4-swizzled | pass | garbage/repeat | \*\*regression\*\* |" "$tmp/cmp.md" || { cat "$tmp/cmp.md"; fail "markdown"; }
"$G" compare --format html --max-slowdown 25% "$tmp/old.db" "$tmp/new.db" >"$tmp/cmp.html" && fail "html: exit 0"
grep -q '<tr class="bad"><td>moe=nvfp4-swizzled</td><td>pass</td><td>garbage/repeat</td>' "$tmp/cmp.html" ||
        fail "html: the broken cell's row"
# two sweeps of one journal: --sweeps
cp "$tmp/old.db" "$tmp/both.db"
matrix "$tmp/upgraded"
"$G" run "$tmp/m.yaml" --journal "$tmp/both.db" >"$tmp/both.out" 2>&1 || true
rc=0
"$G" compare --format json --max-slowdown 25% "$tmp/both.db" --sweeps 1 2 >"$tmp/cmp.json" || rc=$?
[ "$rc" = 1 ] || fail "--sweeps 1 2: exit $rc"
jq -e '.summary.regressions == 1 and .old.sweep == 1 and .new.sweep == 2' "$tmp/cmp.json" >/dev/null ||
        fail "--sweeps 1 2: $(jq -c '.summary, .old, .new' "$tmp/cmp.json")"

# an upgrade that only slows, thresholds above the slowdown: exit 0; below it: exit 1
matrix "$tmp/upgraded"
BREAK=0 sweep slowonly
cmp old slowonly --max-slowdown 90%
[ "$rc" = 0 ] || { [ "$rc" = 3 ] && disturbed; } ||
        fail "exit $rc with --max-slowdown above the slowdown: $(jq -c .summary "$tmp/cmp.json")"
cell nvfp4 | jq -e '.speed.significant and (.speed.regression | not)' >/dev/null || fail "slow only: $(cell nvfp4)"
cmp old slowonly --max-slowdown 25%
[ "$rc" = 1 ] || { [ "$rc" = 3 ] && disturbed; } || fail "exit $rc with --max-slowdown below the slowdown"

# usage: exit 2
for args in "--max-slowdown x $tmp/old.db $tmp/new.db" "$tmp/old.db" "$tmp/old.db $tmp/nothere.db" \
        "$tmp/old.db --sweeps 1 9" "--format yaml $tmp/old.db $tmp/new.db"; do
        rc=0
        # shellcheck disable=SC2086
        "$G" compare $args >/dev/null 2>"$tmp/err" || rc=$?
        [ "$rc" = 2 ] || fail "compare $args: exit $rc"
        [ "$(wc -l <"$tmp/err")" -ge 1 ] || fail "compare $args: no message"
done

# one unchanged matrix, 11 runs, each compared with the next: no false regression
matrix "$TESTBED"
for i in $(seq 0 10); do sweep "u$i"; done
worst=0 conclusive=0
for i in $(seq 0 9); do
        cmp "u$i" "u$((i + 1))" --max-slowdown 25%
        [ "$rc" = 0 ] || { [ "$rc" = 3 ] && disturbed; } ||
                fail "unchanged try $((i + 1)): exit $rc: $(jq -c '.summary, [.cells[] | .speed]' "$tmp/cmp.json")"
        [ "$rc" = 3 ] || conclusive=$((conclusive + 1))
        w=$(jq "[.cells[].speed | select(. != null) | .change | if . < 0 then -. else . end] | max" "$tmp/cmp.json")
        worst=$(jq -n "[$worst, $w] | max")
done
echo "compare: upgrade nvfp4 change/interval: $slow; unchanged: 10 of 10 no regression ($conclusive conclusive, the rest inconclusive: a disturbed host), largest |change| $worst"

#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# compare-steal.sh -- a host whose hypervisor, or other processes, took CPU time during a
# bench (docs/compare.md, "A disturbed host"). A testbed sweep records client_cpu.host_steal
# and client_cpu.host_others for every level (fractions in [0, 1]: this is Linux, and the
# server runs here); a second sweep, with a busy loop per CPU beside it, records others'
# share at 20% or more. Then copies of the first journal are edited as a disturbed host
# would have left them (sqlite3's json_set on the bench's JSON: the figure lower, the steal
# or others' share higher), and compare must say:
#   - a copy as it is (the steal set to 0 in both: this host may be disturbed itself): no
#     change, exit 0;
#   - 40% slower with 20% steal in the new bench (2 x 20% + 5% could explain it):
#     INCONCLUSIVE, exit 3, not a regression; 50% slower with the same steal: SLOWER, exit 1;
#     with --max-steal 50% the same is SLOWER, exit 1;
#   - 50% slower with 2% steal (below --max-steal's 5%): SLOWER, exit 1;
#   - 80% slower with 10% steal (more than 2 x 10% + 5% can explain): SLOWER, exit 1;
#   - the old bench disturbed (20%), the new one as it was: INCONCLUSIVE, exit 3 (a
#     regression may hide behind the old one's low figure);
#   - the text names the steal on both sides;
#   - 40% slower with no steal but other processes at 20% and the host never idle:
#     INCONCLUSIVE, exit 3, the text naming them; 40% slower with 10% of each: the two add
#     up, INCONCLUSIVE, exit 3; other processes at 20% while the host sat idle 50% of the
#     time (they ran beside the server, not in its place): SLOWER, exit 1.
. "$SRCDIR/tests/lib.sh"
command -v jq >/dev/null || fail "jq is needed"
command -v sqlite3 >/dev/null || fail "sqlite3 is needed"
G=$GAUNTLET
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$TESTBED, --host, "{host}", --port, "{port}", --threads, "2"]
startup_timeout: 20s
request_timeout: 30s
stop_timeout: 5s
axes:
  moe:
    flag: --moe-backend
    values: [reference]
checks:
  - {name: math, prompt: "What is 17 * 19?", max_tokens: 24, expect: {regex: "323"}}
probes: false
bench: {concurrency: [1], input_tokens: 16, output_tokens: 32, requests: 16}
objective: output_tokens_per_s@1
emit: []
YAML
"$G" run "$tmp/m.yaml" --journal "$tmp/old.db" >"$tmp/old.out" 2>&1 || { cat "$tmp/old.out"; fail "the sweep failed"; }
"$G" report --format json "$tmp/old.db" >"$tmp/r.json"
steal=$(jq '.cells[0].bench[0].client_cpu.host_steal' "$tmp/r.json")
echo "the sweep's bench: host_steal $steal"
jq -e '.cells[0].bench[0].client_cpu.host_steal | type == "number" and . >= 0 and . <= 1' "$tmp/r.json" \
        >/dev/null || fail "client_cpu.host_steal is no fraction: $steal"
others=$(jq '.cells[0].bench[0].client_cpu.host_others' "$tmp/r.json")
echo "the sweep's bench: host_others $others"
jq -e '.cells[0].bench[0].client_cpu.host_others | type == "number" and . >= 0 and . <= 1' "$tmp/r.json" \
        >/dev/null || fail "client_cpu.host_others is no fraction: $others"
# the same sweep with a busy loop on every CPU: other processes' share is seen, and warned of
burners=()
for _ in $(seq "$(nproc)"); do
        sh -c 'while :; do :; done' &
        burners+=($!)
done
rc=0
"$G" run "$tmp/m.yaml" --journal "$tmp/busy.db" >"$tmp/busy.out" 2>&1 || rc=$?
kill "${burners[@]}"
wait "${burners[@]}" 2>/dev/null || true
[ "$rc" = 0 ] || { cat "$tmp/busy.out"; fail "the sweep beside busy loops failed"; }
"$G" report --format json "$tmp/busy.db" >"$tmp/busy.json"
busy=$(jq '.cells[0].bench[0].client_cpu.host_others' "$tmp/busy.json")
echo "beside $(nproc) busy loops: host_others $busy"
idle=$(jq '.cells[0].bench[0].client_cpu.host_idle' "$tmp/busy.json")
echo "beside $(nproc) busy loops: host_idle $idle"
jq -e '.cells[0].bench[0].client_cpu | .host_others >= 0.2 and .host_idle <= 0.1' "$tmp/busy.json" >/dev/null ||
        fail "busy loops on every CPU, and other processes ran $busy of the host's CPU time, $idle idle"
jq -e '[.cells[0].bench[0].warnings[] | select(test("other processes than gauntlet and the server ran"))] | length == 1' \
        "$tmp/busy.json" >/dev/null || fail "no warning of the others: $(jq -c '.cells[0].bench[0].warnings' "$tmp/busy.json")"

# doctor JOURNAL FIGURE_FACTOR STEAL [OTHERS [IDLE]]: a copy of the quiet journal (below), its
# bench as a disturbed host would have left it
doctor() {
        cp "$tmp/${from:-quiet0}.db" "$tmp/$1.db"
        # the level's figure and its requests' times alike (the bootstrap resamples those)
        sqlite3 "$tmp/$1.db" "UPDATE attempts SET bench = json_set(bench,
                '\$[0].output_tokens_per_s', json_extract(bench, '\$[0].output_tokens_per_s') * $2,
                '\$[0].client_cpu.host_steal', $3, '\$[0].client_cpu.host_others', ${4:-0},
                '\$[0].client_cpu.host_idle', ${5:-0}) WHERE bench IS NOT NULL;
                UPDATE bench_samples SET sample = json_set(sample,
                '\$.e2e_ms', json_extract(sample, '\$.e2e_ms') / $2)" ||
                fail "cannot edit the copy's bench"
}
cmp() { # old new [flags] -> $tmp/cmp.json, $tmp/cmp.txt, rc
        local a=$1 b=$2
        shift 2
        rc=0
        "$G" compare --format json "$@" "$tmp/$a.db" "$tmp/$b.db" >"$tmp/cmp.json" 2>"$tmp/cmp.err" || rc=$?
        "$G" compare "$@" "$tmp/$a.db" "$tmp/$b.db" >"$tmp/cmp.txt" 2>&1 || true
}
speed() {
        jq -c '.cells[0].speed | {change, steal_old, steal_new, others_old, others_new, disturbed, inconclusive, regression}' \
                "$tmp/cmp.json"
}
expect() { # what rc summary-test
        [ "$rc" = "$2" ] || fail "$1: exit $rc, $2 wanted: $(speed) $(cat "$tmp/cmp.err")"
        jq -e "$3" "$tmp/cmp.json" >/dev/null || fail "$1: $(speed) $(jq -c .summary "$tmp/cmp.json")"
        echo "$1: exit $rc $(speed)"
}

# this host's own steal may be anything: the journal as a quiet host would have left it
from=old doctor quiet0 1 0
doctor same 1 0
cmp quiet0 same
expect "the copy" 0 '.summary.inconclusive == 0 and .summary.slower == 0'

doctor stolen 0.6 0.2
cmp quiet0 stolen
expect "40% slower, 20% steal" 3 '.summary.inconclusive == 1 and .summary.slower == 0 and .cells[0].speed.disturbed
        and .cells[0].speed.inconclusive and (.cells[0].speed.regression | not) and .cells[0].speed.steal_new == 0.2'
grep -q '^INCONCLUSIVE: .*1 inconclusive' "$tmp/cmp.txt" || fail "text summary: $(tail -1 "$tmp/cmp.txt")"
grep -F -q "INCONCLUSIVE" <(grep 'moe=reference' "$tmp/cmp.txt") || fail "text cell: $(cat "$tmp/cmp.txt")"
grep -q "the hypervisor took [0-9]*% -> 20% and other processes 0% -> 0% of the host's CPU time during the bench: run it again" \
        "$tmp/cmp.txt" ||
        fail "the text does not name the steal: $(cat "$tmp/cmp.txt")"
cmp quiet0 stolen --max-steal 50%
expect "the same with --max-steal 50%" 1 '.summary.slower == 1 and .summary.inconclusive == 0'

doctor beyond 0.5 0.2
cmp quiet0 beyond
expect "50% slower, 20% steal" 1 '.summary.slower == 1 and .summary.inconclusive == 0 and .cells[0].speed.disturbed'

doctor quiet 0.5 0.02
cmp quiet0 quiet
expect "50% slower, 2% steal" 1 '.summary.slower == 1 and .summary.inconclusive == 0 and (.cells[0].speed.disturbed | not)'

doctor much 0.2 0.1
cmp quiet0 much
expect "80% slower, 10% steal" 1 '.summary.slower == 1 and .summary.inconclusive == 0 and .cells[0].speed.disturbed'

doctor base 1 0.2
cmp base same
expect "the old bench disturbed" 3 '.summary.inconclusive == 1 and .summary.slower == 0 and .cells[0].speed.steal_old == 0.2'

doctor others 0.6 0 0.2
cmp quiet0 others
expect "40% slower, other processes at 20%" 3 '.summary.inconclusive == 1 and .summary.slower == 0
        and .cells[0].speed.disturbed and .cells[0].speed.others_new == 0.2 and .cells[0].speed.steal_new == 0'
grep -q "the hypervisor took 0% -> 0% and other processes 0% -> 20% of the host's CPU time during the bench" "$tmp/cmp.txt" ||
        fail "the text does not name the others: $(cat "$tmp/cmp.txt")"
doctor both 0.6 0.1 0.1
cmp quiet0 both
expect "40% slower, 10% steal and 10% others" 3 '.summary.inconclusive == 1 and .summary.slower == 0'
doctor others_beyond 0.5 0 0.2
cmp quiet0 others_beyond
expect "50% slower, other processes at 20%" 1 '.summary.slower == 1 and .summary.inconclusive == 0'
doctor beside 0.6 0 0.2 0.5
cmp quiet0 beside
expect "40% slower, other processes at 20%, the host 50% idle" 1 '.summary.slower == 1 and .summary.inconclusive == 0
        and (.cells[0].speed.disturbed | not) and .cells[0].speed.others_new == 0'

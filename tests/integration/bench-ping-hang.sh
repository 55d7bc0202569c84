#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# bench-ping-hang.sh -- a hang costs one request timeout, whatever the server sends (docs/metrics.md
# "Failures decide"; issue #32 item 5). tests/standin/hangsrv.py answers the checks, then:
#   - ping: each stream sends a role-only chunk, an empty delta and a usage-only chunk, then an
#     SSE comment ": ping" every second and never a token. Only events that carry tokens (or
#     a finish) count as the server answering: the first request timeout finds no token of
#     any request since it was sent, and the level stops there, in `gauntlet bench` and in a
#     sweep (before: every request waited its own timeout, warm-up ones included);
#   - trickle: a token every second, forever: the server answers, too slowly to end. In a
#     sweep the first timeout, a warm-up request's included, counts against max_failures (0),
#     so the level stops there (before: (warm-up + 1) x the timeout).
# request_timeout is 3 s; a level may take two timeouts (before: three in a sweep, six in
# `gauntlet bench`).
. "$SRCDIR/tests/lib.sh"

SRV="$SRCDIR/tests/standin/hangsrv.py"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }

# 1. gauntlet bench against the ping server: 2 warm-up + 4 requests, one at a time: 18 s
#    before (six timeouts), one timeout now.
python3 "$SRV" --mode ping --interval 1 --port-file "$tmp/ping.port" >"$tmp/ping.log" 2>&1 &
echo $! >"$tmp/pids-ping"
for _ in $(seq 100); do [ -s "$tmp/ping.port" ] && break; sleep 0.05; done
[ -s "$tmp/ping.port" ] || fail "hangsrv did not start"
url="http://127.0.0.1:$(cat "$tmp/ping.port")"
t0=$(date +%s.%N)
rc=0
"$GAUNTLET" bench --url "$url" --concurrency 1 --warmup 2 --requests 4 --output-tokens 8 --timeout 3s \
        --no-calibrate --format json >"$tmp/b.json" 2>"$tmp/b.err" || rc=$?
took=$(echo "$(date +%s.%N) - $t0" | bc)
echo "gauntlet bench, ping-kept hang: exit $rc in $took s"
[ "$(echo "$took < 8" | bc)" = 1 ] || fail "ping: gauntlet bench took $took s (one timeout is 3 s): $(cat "$tmp/b.err")"
grep -q 'stopped early: the server stopped answering' "$tmp/b.json" "$tmp/b.err" \
        || fail "ping: no word of the stop: $(jq -c '[.bench[]?.warnings]' "$tmp/b.json") $(cat "$tmp/b.err")"

run_sweep() { # name matrix-text: sets $took (seconds)
        printf '%s\n' "$2" >"$tmp/$1.yaml"
        local t0 rc=0
        t0=$(date +%s.%N)
        "$GAUNTLET" run "$tmp/$1.yaml" --journal "$tmp/$1.db" >"$tmp/$1.out" 2>&1 || rc=$?
        took=$(echo "$(date +%s.%N) - $t0" | bc)
        [ "$rc" -le 1 ] || { cat "$tmp/$1.out"; fail "$1: gauntlet run exit $rc"; }
        "$GAUNTLET" report --format json "$tmp/$1.db" >"$tmp/$1.json" || fail "$1: no JSON report"
}
levels() { jq -r '[.cells[0].bench[]?.concurrency] | map(tostring) | join(",")' "$tmp/$1.json"; }
verdict() { jq -r '.cells[0] | .verdict + "/" + (.cause // "")' "$tmp/$1.json"; }
warnings() { jq -r '[.cells[0].bench[]?.warnings[]?] | join("; ")' "$tmp/$1.json"; }

common="engine: generic
startup_timeout: 30s
stop_timeout: 1s
request_timeout: 3s
checks: [{name: ok, prompt: \"Reply with exactly: OK\", expect: OK}]
probes: false"
bench="bench: {concurrency: [1, 4], warmup: 2, output_tokens: 16, requests: 8, checks_under_load: false, calibrate: false}"

# 2. a sweep against the ping server: overload/timeout after one timeout, one level.
run_sweep ping "$common
command: [python3, $SRV, --mode, ping, --interval, \"1\", --answer-first, \"2\", --port, \"{port}\"]
$bench"
echo "sweep, ping-kept hang: $(verdict ping) in $took s, the level $(jq '.cells[0].bench[0].client_cpu.wall_s' "$tmp/ping.json") s, levels $(levels ping)"
[ "$(verdict ping)" = overload/timeout ] || fail "ping sweep: verdict $(verdict ping), want overload/timeout"
[ "$(levels ping)" = 1 ] || fail "ping sweep: levels run '$(levels ping)', want only 1"
warnings ping | grep 'stopped early: the server stopped answering' >/dev/null || fail "ping sweep: no word of the stop: $(warnings ping)"
wall=$(jq '.cells[0].bench[0].client_cpu.wall_s' "$tmp/ping.json")
[ "$(echo "$wall < 6" | bc)" = 1 ] || fail "ping sweep: the level took $wall s (one timeout is 3 s)"
[ "$(echo "$took < 20" | bc)" = 1 ] || fail "ping sweep took $took s"

# 3. a sweep against the trickle server: tokens come, a request never ends; the first
#    timeout (a warm-up request's) decides against max_failures 0.
run_sweep trickle "$common
command: [python3, $SRV, --mode, trickle, --interval, \"1\", --answer-first, \"2\", --port, \"{port}\"]
$bench"
echo "sweep, trickle: $(verdict trickle) in $took s, the level $(jq '.cells[0].bench[0].client_cpu.wall_s' "$tmp/trickle.json") s, levels $(levels trickle)"
[ "$(verdict trickle)" = overload/timeout ] || fail "trickle sweep: verdict $(verdict trickle), want overload/timeout"
[ "$(levels trickle)" = 1 ] || fail "trickle sweep: levels run '$(levels trickle)', want only 1"
warnings trickle | grep 'stopped early: failures over max_failures' >/dev/null || fail "trickle sweep: no word of the stop: $(warnings trickle)"
[ "$(jq '.cells[0].bench[0].failed' "$tmp/trickle.json")" = 1 ] || fail "trickle sweep: more than the deciding failure counted"
wall=$(jq '.cells[0].bench[0].client_cpu.wall_s' "$tmp/trickle.json")
[ "$(echo "$wall < 6" | bc)" = 1 ] || fail "trickle sweep: the level took $wall s (one timeout is 3 s)"
[ "$(echo "$took < 20" | bc)" = 1 ] || fail "trickle sweep took $took s"

#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# bench-hang.sh -- a hung server costs one timeout, not all of them (docs/metrics.md
# "Failures decide"):
#   - a server that passes the checks, then never answers a bench request: the level stops
#     at the first timeout (nothing came back since that request went out), the requests in
#     flight are cancelled, the rest never sent, no later level runs: overload/timeout
#     after one request_timeout, not one per request (80 s before);
#   - a server that answers, too slowly: once the failures exceed max_failures the verdict
#     is decided, and the same happens;
#   - with a max_failures the failures never exceed, every level runs to its end.
# The time bounds are loose (several times what it takes; a fraction of what it took).
. "$SRCDIR/tests/lib.sh"

run_sweep() { # name matrix-text: sets $took (seconds)
        printf '%s\n' "$2" >"$tmp/$1.yaml"
        local t0=$SECONDS rc=0
        "$GAUNTLET" run "$tmp/$1.yaml" --journal "$tmp/$1.db" >"$tmp/$1.out" 2>&1 || rc=$?
        took=$((SECONDS - t0))
        [ "$rc" -le 1 ] || { cat "$tmp/$1.out"; fail "$1: gauntlet run exit $rc"; }
        "$GAUNTLET" report --format json "$tmp/$1.db" >"$tmp/$1.json" || fail "$1: no JSON report"
        expect_none_alive "$1: a server is left" 5
}

levels() { jq -r '[.cells[0].bench[]?.concurrency] | map(tostring) | join(",")' "$tmp/$1.json"; }
verdict() { jq -r '.cells[0] | .verdict + "/" + (.cause // "")' "$tmp/$1.json"; }
warnings() { jq -r '[.cells[0].bench[]?.warnings[]?] | join("; ")' "$tmp/$1.json"; }

# The probes are off: these servers hang or crawl on purpose after the checks, and it is
# the bench's handling of that which is tested here.
common="engine: generic
startup_timeout: 30s
stop_timeout: 1s
checks: [{name: ok, prompt: \"Reply with exactly: OK\", expect: OK}]
probes: false"

# 1. Hung: the checks' 2 requests (non-streamed, streamed) are answered, then nothing.
#    request_timeout 6 s, 8 requests, concurrency [1, 4], 2 warm-up requests: 80 s before.
run_sweep hung "$common
command: [$FIXTURE, --port, \"{port}\", --pid-file, \"$tmp/pids-hung-{port}\", --hang-after-requests, \"2\"]
request_timeout: 6s
bench: {concurrency: [1, 4], output_tokens: 16, requests: 8, checks_under_load: false, calibrate: false}"
[ "$(verdict hung)" = overload/timeout ] || fail "hung: verdict $(verdict hung), want overload/timeout"
[ "$(levels hung)" = 1 ] || fail "hung: levels run '$(levels hung)', want only 1"
warnings hung | grep 'stopped early: the server stopped answering' >/dev/null || fail "hung: no word of the stop: $(warnings hung)"
[ "$took" -le 40 ] || fail "hung: the sweep took $took s (one timeout is 6 s)"
echo "hung server: overload/timeout in $took s, one level"

# 2. Too slow: tokens every 400 ms, 16 asked, request_timeout 3 s; bytes come back, so it
#    is not hung, but max_failures (0) is exceeded by the first counted timeout.
slow="$common
command: [$FIXTURE, --port, \"{port}\", --pid-file, \"$tmp/pids-slow-{port}\", --token-delay-ms, \"400\", --answer-for, \"Reply with exactly=OK\", --answer, \"one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen\"]
request_timeout: 3s"
run_sweep slow "$slow
bench: {concurrency: [1, 4], output_tokens: 16, requests: 8, checks_under_load: false, calibrate: false}"
[ "$(verdict slow)" = overload/timeout ] || fail "slow: verdict $(verdict slow), want overload/timeout"
[ "$(levels slow)" = 1 ] || fail "slow: levels run '$(levels slow)', want only 1"
warnings slow | grep 'stopped early: failures over max_failures' >/dev/null || fail "slow: no word of the stop: $(warnings slow)"
[ "$(jq '.cells[0].bench[0].failed' "$tmp/slow.json")" = 1 ] || fail "slow: more than the deciding failure counted"
[ "$took" -le 40 ] || fail "slow: the sweep took $took s (old: about 45 s)"
echo "slow server, max_failures 0: decided in $took s, one level"

# 3. The same server with room for every failure: nothing is decided early, both levels run
#    all their requests (2 each, no warm-up).
run_sweep room "$slow
bench: {concurrency: [1, 2], output_tokens: 16, requests: 2, warmup: 0, max_failures: 10, checks_under_load: false, calibrate: false}"
[ "$(levels room)" = 1,2 ] || fail "room: levels run '$(levels room)', want 1,2"
[ "$(jq '[.cells[0].bench[].requests] | add' "$tmp/room.json")" = 4 ] || fail "room: not every request was sent"
! warnings room | grep 'stopped early' >/dev/null || fail "room: stopped early: $(warnings room)"
echo "room for the failures: both levels whole, in $took s"

# 4. the same over two loops (bench.threads): a stop decided on one loop stops the other,
#    and the failure gate counts the failures of both.
run_sweep hung2 "$common
command: [$FIXTURE, --port, \"{port}\", --pid-file, \"$tmp/pids-hung2-{port}\", --hang-after-requests, \"2\"]
request_timeout: 6s
bench: {concurrency: [4, 8], threads: 2, output_tokens: 16, requests: 8, checks_under_load: false, calibrate: false}"
[ "$(verdict hung2)" = overload/timeout ] || fail "hung2: verdict $(verdict hung2), want overload/timeout"
[ "$(levels hung2)" = 4 ] || fail "hung2: levels run '$(levels hung2)', want only 4"
[ "$(jq '.cells[0].bench[0].client_cpu.threads' "$tmp/hung2.json")" = 2 ] || fail "hung2: not two loops"
warnings hung2 | grep 'stopped early: the server stopped answering' >/dev/null || fail "hung2: no word of the stop: $(warnings hung2)"
[ "$took" -le 40 ] || fail "hung2: the sweep took $took s (one timeout is 6 s)"
run_sweep slow2 "$slow
bench: {concurrency: [4, 8], threads: 2, output_tokens: 16, requests: 8, checks_under_load: false, calibrate: false}"
[ "$(verdict slow2)" = overload/timeout ] || fail "slow2: verdict $(verdict slow2), want overload/timeout"
[ "$(levels slow2)" = 4 ] || fail "slow2: levels run '$(levels slow2)', want only 4"
warnings slow2 | grep 'stopped early: failures over max_failures' >/dev/null || fail "slow2: no word of the stop: $(warnings slow2)"
[ "$took" -le 40 ] || fail "slow2: the sweep took $took s"
echo "two loops: hung and slow servers stopped on both, one level each"

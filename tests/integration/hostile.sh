#!/usr/bin/env bash
# tier: faults (tests/run faults)
# hostile.sh -- gauntlet against servers that misbehave on purpose (tests/hostile/hostile.c):
# an endless SSE line, an endless body, invalid UTF-8, a slowloris trickle, no Content-Type,
# an HTML page, a stream that never ends, one closed mid-stream, a huge header, broken
# chunked encoding, bytes that are not HTTP. For each, `gauntlet smoke` and `gauntlet bench`
# must end by themselves (exit 0 or 1, never a signal), in bounded time and memory, with a
# verdict that names the fault; then a sweep runs the hostile server as a generic engine
# and leaves no process behind.
set -euo pipefail
HOSTILE=${HOSTILE:-$SRCDIR/$BUILD/bin/gauntlet-hostile}
[ -x "$HOSTILE" ] || { echo "FAIL: $HOSTILE is not built (make hostile)"; exit 1; }
command -v jq >/dev/null || { echo "FAIL: jq is needed"; exit 1; }
. "$SRCDIR/tests/proc.sh"
tmp=$(mktemp -d)
MAX_RSS_KB=$((200 * 1024))
# AddressSanitizer's shadow memory and quarantine triple a peak (44 MB -> 210 MB for an
# endless model list): a sanitizer build gets more room, the bound still catches a leak
case "$({ ldd "$GAUNTLET"; nm -D "$GAUNTLET"; } 2>/dev/null || true)" in
*libasan* | *__asan_init*) MAX_RSS_KB=$((600 * 1024)) ;;
esac

# every process whose command line names our temporary folder: only ours
our_pids() {
        local d p
        for d in /proc/[0-9]*; do
                p=${d#/proc/}
                [ "$p" = $$ ] && continue
                if { tr '\0' ' ' <"$d/cmdline"; } 2>/dev/null | grep -F -- "$tmp" >/dev/null; then
                        if pid_running "$p"; then echo "$p"; fi
                fi
        done
}
cleanup() {
        local p
        for p in $(our_pids); do kill -9 "$p" 2>/dev/null || true; done
        rm -rf "$tmp"
}
trap cleanup EXIT
. "$SRCDIR/tests/assert.sh"

hpid=
start_hostile() { # mode [--everything]
        rm -f "$tmp/port"
        "$HOSTILE" --port 0 --port-file "$tmp/port" --mode "$@" &
        hpid=$!
        local i
        for i in $(seq 100); do
                [ -s "$tmp/port" ] && break
                sleep 0.05
        done
        [ -s "$tmp/port" ] || fail "gauntlet-hostile --mode $1 did not start"
        url="http://127.0.0.1:$(cat "$tmp/port")"
}
stop_hostile() {
        kill "$hpid" 2>/dev/null || true
        wait "$hpid" 2>/dev/null || true
}

# runs gauntlet with a wall-clock limit; sets rc, secs, rss_kb (peak, from /usr/bin/time or
# the kernel's accounting through bash's `times` is not enough: /proc polling as fallback)
measured() { # limit_s, out_file, gauntlet args...
        local limit=$1 out=$2; shift 2
        local t0=$SECONDS
        set +e
        if [ -x /usr/bin/time ]; then
                timeout -s KILL "$limit" /usr/bin/time -f '%M' -o "$tmp/rss" "$GAUNTLET" "$@" >"$out" 2>"$tmp/stderr"
                rc=$?
                rss_kb=$(tail -n 1 "$tmp/rss" 2>/dev/null || echo 0)
        else
                "$GAUNTLET" "$@" >"$out" 2>"$tmp/stderr" &
                local gp=$! peak=0 cur
                while kill -0 "$gp" 2>/dev/null; do
                        cur=$(awk '/^VmHWM/ {print $2}' "/proc/$gp/status" 2>/dev/null || echo 0)
                        [ "${cur:-0}" -gt "$peak" ] && peak=$cur
                        [ $((SECONDS - t0)) -gt "$limit" ] && kill -9 "$gp"
                        sleep 0.1
                done
                wait "$gp"
                rc=$?
                rss_kb=$peak
        fi
        set -e
        secs=$((SECONDS - t0))
        [ "$rc" -le 1 ] || { cat "$tmp/stderr" >&2; fail "gauntlet $1 exited $rc (a signal or a usage error) [$*]"; }
        # a sanitizer report exits 1 too: look for it
        if grep -q 'Sanitizer\|runtime error:' "$tmp/stderr"; then cat "$tmp/stderr" >&2; fail "sanitizer report [$*]"; fi
        [ "$secs" -lt "$limit" ] || fail "gauntlet $1 took ${secs}s [$*]"
        [ "${rss_kb:-0}" -lt "$MAX_RSS_KB" ] || fail "gauntlet $1 peaked at ${rss_kb} kB [$*]"
}

cat >"$tmp/stream.yaml" <<'YAML'
- name: ok
  prompt: "Reply with exactly: OK"
  stream: true
  expect: {equals: OK}
YAML

# mode | default suite: verdict/cause | evidence fragment | stream-only suite: verdict/cause
# | evidence fragment | bench: requests completed of 2 (bench measures speed, not content:
# an answer in broken UTF-8 still completes; the checks judge it)
cases='
ok|pass/null||pass/null||2
no-content-type|pass/null||pass/null||2
endless-line|garbage/http|response body over|garbage/http|over the size limit|0
endless-body|garbage/http|response body over|garbage/http|over the size limit|0
invalid-utf8|garbage/invalid-text|U+FFFD|garbage/invalid-text|U+FFFD|2
slowloris|timeout/request|within 3s|-||0
html|garbage/http|malformed JSON|garbage/http|no server-sent events|0
never-close|timeout/request|within 3s|-||0
close-mid-stream|garbage/http|closed mid-stream|garbage/http|closed mid-stream|0
huge-header|garbage/http|headers too large|garbage/http|headers too large|0
chunked-error|garbage/http||garbage/http||0
garbage|garbage/http|not an HTTP response|garbage/http|not an HTTP response|0
after-done|garbage/empty|after [DONE], ignored|garbage/empty|after [DONE], ignored|0
'

expect_verdict() { # file, verdict/cause, evidence fragment, label
        local got ev
        got=$(jq -r '"\(.verdict)/\(.cause)"' "$1") || fail "$4: not JSON: $(head -c 300 "$1")"
        ev=$(jq -r '.evidence // ""' "$1")
        [ "$got" = "$2" ] || fail "$4: verdict $got, want $2 (evidence: $ev)"
        case "$ev" in *"$3"*) ;; *) fail "$4: evidence '$ev' lacks '$3'" ;; esac
}

while IFS='|' read -r mode want ev swant sev bwant; do
        [ -n "$mode" ] || continue
        start_hostile "$mode"
        measured 20 "$tmp/smoke.json" smoke --url "$url" --format json --timeout 3s
        expect_verdict "$tmp/smoke.json" "$want" "$ev" "smoke/$mode"
        if [ "$want" = pass/null ]; then [ "$rc" -eq 0 ] || fail "smoke/$mode: exit $rc"; else [ "$rc" -eq 1 ] || fail "smoke/$mode: exit $rc"; fi
        line="$mode: smoke $want ${secs}s ${rss_kb}kB"
        if [ "$swant" != - ]; then
                measured 20 "$tmp/stream.json" smoke --url "$url" --format json --timeout 3s --checks "$tmp/stream.yaml"
                expect_verdict "$tmp/stream.json" "$swant" "$sev" "smoke-stream/$mode"
                line="$line; stream $swant ${secs}s ${rss_kb}kB"
        fi
        measured 20 "$tmp/bench.json" bench --url "$url" --concurrency 2 --requests 2 --output-tokens 8 \
                --timeout 3s --format json
        completed=$(jq '[.bench[].completed] | add' "$tmp/bench.json") || fail "bench/$mode: not JSON"
        [ "$completed" -eq "$bwant" ] || fail "bench/$mode: $completed of 2 completed, want $bwant"
        if [ "$bwant" -eq 0 ]; then [ "$rc" -eq 1 ] || fail "bench/$mode: exit $rc with no request completed"; fi
        echo "$line; bench completed $completed ${secs}s ${rss_kb}kB"
        stop_hostile
done <<<"$cases"

# the misbehaviour on every path, the model list and the health probe included
for mode in garbage html endless-body; do
        start_hostile "$mode" --everything
        measured 20 "$tmp/smoke.json" smoke --url "$url" --format json --timeout 3s
        v=$(jq -r '"\(.verdict)/\(.cause)"' "$tmp/smoke.json")
        [ "$v" = garbage/http ] || fail "smoke/$mode --everything: $v"
        echo "$mode --everything: smoke $v ${secs}s ${rss_kb}kB"
        stop_hostile
done

# a sweep with the hostile server as the engine: verdicts journaled, nothing left behind
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$HOSTILE, --port, "{port}", --host, "{host}", --port-file, "$tmp/sweep-port-{port}"]
startup_timeout: 5s
request_timeout: 2s
stop_timeout: 1s
axes:
  mode:
    flag: --mode
    values: [endless-line, close-mid-stream, never-close]
YAML
measured 50 "$tmp/run.out" run "$tmp/m.yaml" --journal "$tmp/j.db"
[ "$rc" -eq 1 ] || fail "run: exit $rc, want 1 (no cell passes)"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/report.json"
got=$(jq -r '[.cells[] | "\(.axes.mode)=\(.verdict)/\(.cause)"] | join(" ")' "$tmp/report.json")
want="endless-line=garbage/http close-mid-stream=garbage/http never-close=timeout/request"
[ "$got" = "$want" ] || fail "run: cells $got, want $want"
echo "run: $got ${secs}s ${rss_kb}kB"
left=$(our_pids)
[ -z "$left" ] || fail "processes left after the sweep: $left"
echo "hostile: all passed"

#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# first-contact.sh -- what a new user meets first: the testbed found beside gauntlet with
# no PATH set up; a server that cannot start at all (not found, not executable, a missing
# workdir, a host that is not this machine's) stops the sweep before the first cell with
# one line naming the matrix line, exit 2; "no GPU found" only for engines that need one;
# a damaged journal named as such; a FIFO for a matrix refused at once; with the reports'
# disk full, only the reports written are named.
. "$SRCDIR/tests/lib.sh"
export GAUNTLET_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1   # no GPU, even on a GPU host

# 1. engine: testbed, with a PATH that does not hold gauntlet-testbed
cat >"$tmp/tb.yaml" <<'YAML'
engine: testbed
startup_timeout: 30s
YAML
PATH=/usr/bin:/bin "$GAUNTLET" run "$tmp/tb.yaml" --journal "$tmp/tb.db" >"$tmp/tb.out" 2>"$tmp/tb.err" ||
        { cat "$tmp/tb.out" "$tmp/tb.err"; fail "testbed without PATH: the sweep did not pass"; }
grep -q "^1 cells*: 1 pass" "$tmp/tb.out" || { cat "$tmp/tb.out"; fail "testbed without PATH: no passing cell"; }
! grep -q "no GPU found" "$tmp/tb.err" || fail "a CPU engine was told there is no GPU: $(cat "$tmp/tb.err")"

# 2. servers that cannot start: one line with FILE:LINE, exit 2, no cell run
touch "$tmp/not-exec"
i=0
while IFS='|' read -r body want; do
        [ -n "$body" ] || continue
        i=$((i + 1))
        printf 'engine: generic\nstartup_timeout: 5s\n%b\n' "$body" >"$tmp/bad$i.yaml"
        set +e
        "$GAUNTLET" run "$tmp/bad$i.yaml" --journal "$tmp/bad$i.db" >"$tmp/bad.out" 2>"$tmp/bad.err"
        rc=$?
        set -e
        [ "$rc" -eq 2 ] || fail "case $i: exit $rc, want 2 ($(cat "$tmp/bad.err"))"
        grep -q "^gauntlet: $tmp/bad$i.yaml:$want" "$tmp/bad.err" || fail "case $i: got '$(cat "$tmp/bad.err")', want '...bad$i.yaml:$want'"
        [ "$(grep -c . "$tmp/bad.err")" -eq 1 ] || fail "case $i: more than one line: $(cat "$tmp/bad.err")"
        ! grep -q '^\[' "$tmp/bad.out" || fail "case $i: a cell ran: $(cat "$tmp/bad.out")"
done <<EOF2
command: [no-such-server-here, --port, "{port}"]|3: cannot start 'no-such-server-here': No such file or directory (not on PATH)
command: [$tmp/not-exec, --port, "{port}"]|3: cannot start '$tmp/not-exec': not an executable file
command: [$FIXTURE, --port, "{port}"]\\nworkdir: $tmp/no-such-dir|4: workdir '$tmp/no-such-dir' is not a folder: No such file or directory
command: [$FIXTURE, --port, "{port}"]\\nhost: 192.0.2.77|4: host '192.0.2.77' is not an address of this machine
EOF2

# 9. control and bidi characters in axis names and values are escaped in the run's lines
printf 'engine: testbed\nstartup_timeout: 30s\naxes:\n  "mo\\u202ee":\n    values: [{name: "a\\u2066b"}]\n' >"$tmp/bidi.yaml"
PATH=/usr/bin:/bin "$GAUNTLET" run "$tmp/bidi.yaml" --journal "$tmp/bidi.db" >"$tmp/bidi.out" 2>&1 ||
        { cat "$tmp/bidi.out"; fail "the bidi sweep failed"; }
grep -q 'mo\\u202ee=a\\u2066b' "$tmp/bidi.out" || fail "axis text not escaped: $(head -3 "$tmp/bidi.out" | od -c | head -5)"
! grep -q "$(printf '\342\200\256')" "$tmp/bidi.out" || fail "a raw bidi override reached the terminal"
! grep -q "$(printf '\342\201\246')" "$tmp/bidi.out" || fail "a raw bidi isolate reached the terminal"
# and in the matrix's own error messages
printf 'engine: testbed\naxes:\n  "mo\\u202ee":\n    values: [x]\n' >"$tmp/bidi2.yaml"
set +e
"$GAUNTLET" run "$tmp/bidi2.yaml" --journal "$tmp/bidi2.db" >/dev/null 2>"$tmp/bidi2.err"
set -e
grep -q "axis 'mo\\\\u202ee' has no flag" "$tmp/bidi2.err" || fail "matrix error not escaped: $(cat "$tmp/bidi2.err")"

# 9. a FIFO given as the matrix is refused at once, not read for ever
mkfifo "$tmp/fifo.yaml"
set +e
timeout 10 "$GAUNTLET" run "$tmp/fifo.yaml" --journal "$tmp/fifo.db" >/dev/null 2>"$tmp/fifo.err"
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "^gauntlet: cannot read '$tmp/fifo.yaml': not a regular file$" "$tmp/fifo.err" ||
        fail "a FIFO as the matrix: exit $rc, $(cat "$tmp/fifo.err")"

# 3. a GPU engine without a GPU says so, once
printf 'engine: vllm\nmodel: m\n' >"$tmp/vllm.yaml"
set +e
PATH=/usr/bin:/bin "$GAUNTLET" run "$tmp/vllm.yaml" --journal "$tmp/vllm.db" >/dev/null 2>"$tmp/vllm.err"
set -e
[ "$(grep -c "no GPU found" "$tmp/vllm.err")" -eq 1 ] || fail "vllm without a GPU: $(cat "$tmp/vllm.err")"

# 7. a file that is not a journal
echo "not a database, just text that is long enough to be read as a header of some kind" >"$tmp/junk.db"
set +e
"$GAUNTLET" run "$tmp/tb.yaml" --journal "$tmp/junk.db" >/dev/null 2>"$tmp/junk.err"
rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "^gauntlet: '$tmp/junk.db' is not a gauntlet journal$" "$tmp/junk.err" ||
        fail "a damaged journal: exit $rc, $(cat "$tmp/junk.err")"

# 10. the reports' disk is full: no report named that was not written
so=$SRCDIR/$BUILD/lib/gauntlet-enospc.so
case "$BUILD" in /*) so=$BUILD/lib/gauntlet-enospc.so ;; esac
[ -f "$so" ] || fail "$so is missing: make test builds it (make BUILD=$BUILD faults)"
{
        set +e
        # a report is written to a hidden temporary file beside it (tb2/.report.json.XXXXXX),
        # then renamed into place: the full disk is met there
        GAUNTLET_ENOSPC_PREFIX="$(readlink -f "$tmp")/tb2/.report" GAUNTLET_ENOSPC_BUDGET=0 LD_PRELOAD="$so" \
                ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
                "$GAUNTLET" run "$tmp/tb.yaml" --journal "$tmp/tb2.db" >"$tmp/full.out" 2>"$tmp/full.err"
        set -e
        ! grep -q '^reports:' "$tmp/full.out" || fail "reports named although none was written: $(cat "$tmp/full.out")"
        grep -q "cannot write '.*report.json': No space left on device" "$tmp/full.err" || fail "no word of the full disk: $(cat "$tmp/full.err")"
        [ ! -s "$tmp/tb2/report.json" ] || fail "a report cut short was left"
        ! ls "$tmp"/tb2/.report* >/dev/null 2>&1 || fail "a temporary report was left: $(ls -a "$tmp/tb2")"
}
expect_none_alive "processes left"
echo "first-contact.sh: all good"

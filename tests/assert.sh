# tests/assert.sh -- the one way a test script says that a check failed. Sourced by
# tests/lib.sh and by the integration scripts that keep a set-up of their own.
#
#   fail MSG        the test fails here: "FAIL: MSG" on stderr, then exit 1 (the EXIT trap
#                   cleans up); with $fail_log naming a file, its lines are shown too
#   soft_fail MSG   the test will fail, but the script goes on to the other checks (for
#                   scripts that report every broken check in one run); counted in
#                   $failures
#   finish NAME     the end of a script that uses soft_fail: exit 1 with the count when
#                   any check failed, else "NAME: all good"
failures=0
fail() {
        echo "FAIL: $*" >&2
        if [ -n "${fail_log:-}" ] && [ -f "$fail_log" ]; then sed 's/^/    log| /' "$fail_log" >&2; fi
        exit 1
}
soft_fail() {
        echo "FAIL: $*" >&2
        failures=$((failures + 1))
}
finish() {
        if [ "$failures" -gt 0 ]; then
                echo "$1: $failures check(s) failed" >&2
                exit 1
        fi
        echo "$1: all good"
}

# shellcheck shell=bash
# tests/proc.sh -- sourced by the test helpers that ask whether a process still runs, or how
# many servers started.
#
# pid_running PID: true while PID is a process that is neither a zombie nor being reaped.
# The state is read once: a process reaped between two looks at /proc (first there, then
# its status gone) must count as ended, not as running.
pid_running() {
        local state
        state=$(sed -n 's/^State:[[:space:]]*\([A-Za-z]\).*/\1/p' "/proc/$1/status" 2>/dev/null) || return 1
        case $state in
        "" | Z | X | x) return 1 ;;
        esac
        return 0
}

# How many servers started with --launch-log FILE (0 before the first): a pid file named by
# {port} counts ports, and the kernel may hand a freed port out again.
launch_count() { cat "$1" 2>/dev/null | wc -l; }

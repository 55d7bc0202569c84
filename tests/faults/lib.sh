# shellcheck shell=bash
# tests/faults/lib.sh -- shared helpers of the fault tests (tests/integration/faults-*.sh).
#
# Source it after `set -euo pipefail`. It makes $tmp (a fresh folder), and an EXIT trap
# that ends the background jobs of the test (gauntlet runs: `jobs -rp`, never a pid that
# may have been reused) and every fixture process named in $tmp/pids-* or collected in
# $tmp/allpids, so nothing is left behind even when an assertion fails. Fixture pid files
# must be "$tmp/pids-..." (one per port).
#
# PIDs are reused (pid_max is often 32768, and other tests run fixtures at the same time),
# so a pid is only believed with the start time it had when it was collected:
# $tmp/allpids holds "PID STARTTIME" lines.

. "$SRCDIR/tests/proc.sh"
tmp=$(mktemp -d)
: >"$tmp/allpids"

faults_cleanup() {
        # only the test's own shell cleans up, never a subshell that inherited the trap
        [ "$BASHPID" = "$$" ] || return 0
        local p
        for p in $(jobs -rp); do kill -9 "$p" 2>/dev/null || true; done
        for p in $(alive_fixtures); do kill -9 "$p" 2>/dev/null || true; done
        rm -rf "$tmp"
}
trap faults_cleanup EXIT

fail() {
        echo "FAIL: $*" >&2
        exit 1
}

# Start time of pid (field 22 of /proc/PID/stat), or nothing when it is gone.
starttime() {
        local s
        s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
        s=${s##*) }
        # shellcheck disable=SC2086
        set -- $s
        echo "${20}"
}

# Whether pid is a live (not zombie) gauntlet-fixture started at start ("" for any).
is_fixture() { # pid [start]
        local p=$1
        [ -r "/proc/$p/cmdline" ] || return 1
        pid_running "$p" || return 1
        [ -z "${2:-}" ] || [ "$(starttime "$p")" = "$2" ] || return 1
        tr '\0' '\n' <"/proc/$p/cmdline" 2>/dev/null | head -n 1 | grep -q 'gauntlet-fixture$'
}

# Adds every pid named in the pid files to $tmp/allpids with its start time (pid files
# are per port and a reused port truncates one, so collect after every run). A pid gone
# by then gets start time 0: it can never count as alive later.
collect_pids() {
        local f p st
        for f in "$tmp"/pids-*; do
                [ -f "$f" ] || continue
                while read -r p; do
                        [ -n "$p" ] || continue
                        st=0
                        is_fixture "$p" && st=$(starttime "$p")
                        st=${st:-0}
                        grep -q "^$p $st\$" "$tmp/allpids" && continue
                        [ "$st" = 0 ] && grep -q "^$p " "$tmp/allpids" && continue
                        echo "$p $st" >>"$tmp/allpids"
                done <"$f"
        done
}

# Every fixture process ever recorded that is still running, one pid a line.
alive_fixtures() {
        local p st
        collect_pids
        while read -r p st; do
                if [ "$st" != 0 ] && is_fixture "$p" "$st"; then echo "$p"; fi
        done <"$tmp/allpids"
}

# Waits up to $1 seconds (default 5) for every recorded fixture to be gone; fails naming
# the survivors otherwise. The wait is generous: a loaded machine is slow to reap.
expect_no_fixture() {
        local limit=${1:-5} left
        for _ in $(seq $((limit * 20))); do
                left=$(alive_fixtures)
                [ -z "$left" ] && return 0
                sleep 0.05
        done
        fail "processes left behind: $(echo "$left" | tr '\n' ' ') ${2:-}"
}

# A script's background jobs start with SIGINT ignored (no job control); a user's
# Ctrl-C reaches a program whose SIGINT is at its default. Give gauntlet that.
if env --default-signal=INT,TERM true 2>/dev/null; then
        DEFSIG=(env "--default-signal=INT,TERM")
else
        DEFSIG=()
fi

# Starts gauntlet in the background with the given arguments; stdout and stderr go to
# $tmp/out.$tag and $tmp/err.$tag. Sets $gpid.
start_gauntlet() { # tag, args...
        local tag=$1
        shift
        "${DEFSIG[@]}" "$GAUNTLET" "$@" >"$tmp/out.$tag" 2>"$tmp/err.$tag" &
        gpid=$!
}

# Waits for $gpid; sets $status to its exit status.
# shellcheck disable=SC2034 # status is the caller's
wait_gauntlet() {
        set +e
        wait "$gpid"
        status=$?
        set -e
}

# Waits up to $2 seconds for at least $1 lines in the pid files named by the glob $3
# (a server and its helpers have started). Returns 1 on timeout.
wait_pid_lines() { # count, seconds, glob
        local want=$1 limit=$2 glob=$3 _ n
        for _ in $(seq $((limit * 20))); do
                # shellcheck disable=SC2086
                n=$(cat $glob 2>/dev/null | wc -l)
                [ "$n" -ge "$want" ] && return 0
                sleep 0.05
        done
        return 1
}

# Client-side TCP connections to 127.0.0.1:port that are established (gauntlet's requests
# in flight to a fixture; a bench at concurrency N holds N of them).
established_to() { # port
        local hex
        hex=$(printf '%04X' "$1")
        awk -v p=":$hex" '$3 ~ p"$" && $4 == "01"' /proc/net/tcp | wc -l
}

# The journal answers: integrity_check is ok.
journal_ok() { # journal
        local got
        got=$(sqlite3 "$1" 'PRAGMA integrity_check' 2>&1) || fail "sqlite3 cannot open $1: $got"
        [ "$got" = ok ] || fail "integrity_check of $1: $got"
}

# Settled attempts as "id cell verdict" lines, sorted.
settled_attempts() { # journal
        sqlite3 "$1" "SELECT id || ' ' || cell_id || ' ' || verdict FROM attempts WHERE state = 'settled'" | sort
}

# The shim (mk/faults.mk); empty when it is not built.
ENOSPC_SO="$SRCDIR/$BUILD/lib/gauntlet-enospc.so"
case "$BUILD" in /*) ENOSPC_SO="$BUILD/lib/gauntlet-enospc.so" ;; esac
need_shim() {
        [ -f "$ENOSPC_SO" ] || fail "$ENOSPC_SO is missing: build it with 'make BUILD=$BUILD faults'"
}
# The shim goes into sanitized binaries too: ASan must not insist on coming first.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

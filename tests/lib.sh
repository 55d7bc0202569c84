# tests/lib.sh -- sourced by integration scripts that sweep the fixture server: a temporary
# folder, a cleanup that kills every pid the fixtures listed in "$tmp"/pids-* (even when an
# assertion failed), fail(), and alive_pids().
set -euo pipefail
. "$SRCDIR/tests/proc.sh"
tmp=$(mktemp -d)
cleanup() {
        local f
        for f in "$tmp"/pids-*; do
                if [ -f "$f" ]; then xargs -r kill -9 <"$f" 2>/dev/null || true; fi
        done
        rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Every pid listed in the pid files that is still running (zombies excluded, see proc.sh).
alive_pids() {
        local f p
        for f in "$tmp"/pids-*; do
                [ -f "$f" ] || continue
                while read -r p; do
                        [ -n "$p" ] || continue
                        if pid_running "$p"; then echo "$p"; fi
                done <"$f"
        done
}

# tests/smoke-lib.sh -- sourced by the scripts that run `gauntlet smoke` against the scripted
# fixture (smoke.sh, probes.sh): a temporary folder, the fixture on a free port (start,
# stop; killed on exit) and smoke EXPECTED_EXIT ARGS..., whose JSON is in $tmp/out.json.
set -u
GAUNTLET=${GAUNTLET:-$PWD/build/bin/gauntlet}
FIXTURE=${FIXTURE:-$PWD/build/bin/gauntlet-fixture}
tmp=$(mktemp -d)
PID=

stop() {
        if [ -n "$PID" ]; then
                kill -KILL "$PID" 2>/dev/null
                wait "$PID" 2>/dev/null
                PID=
        fi
}
cleanup() {
        stop
        rm -rf "$tmp"
}
trap cleanup EXIT

. "$SRCDIR/tests/assert.sh"
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# start ARGS...: the fixture on a free port; waits for its ready line; sets PORT and PID.
start() {
        stop
        local try i
        for try in 1 2 3 4 5; do
                PORT=$((20000 + RANDOM % 30000))
                port_busy "$PORT" && continue
                # a stale "ready" from the last fixture must not count for this one
                rm -f "$tmp/fx.out" "$tmp/fx.err"
                "$FIXTURE" --port "$PORT" "$@" >"$tmp/fx.out" 2>"$tmp/fx.err" &
                PID=$!
                for i in $(seq 100); do
                        grep -q 'ready' "$tmp/fx.out" 2>/dev/null && return 0
                        kill -0 "$PID" 2>/dev/null || break
                        sleep 0.05
                done
                stop
        done
        echo "cannot start the fixture: $(cat "$tmp/fx.err")"
        return 1
}

# smoke EXPECTED_EXIT ARGS...: runs smoke --format json; the output is in $tmp/out.json.
smoke() {
        local want=$1; shift
        "$GAUNTLET" smoke --url "http://127.0.0.1:$PORT" --format json "$@" >"$tmp/out.json" 2>"$tmp/err"
        local st=$?
        if [ "$st" -ne "$want" ]; then
                soft_fail "smoke $* exited $st, wanted $want"
                sed 's/^/    /' "$tmp/out.json" "$tmp/err" | head -n 40
                return 1
        fi
}

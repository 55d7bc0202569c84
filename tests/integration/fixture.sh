#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# fixture.sh -- self-test of build/bin/gauntlet-fixture: process behaviours and HTTP replies.
set -u
FIXTURE=${FIXTURE:-$PWD/build/bin/gauntlet-fixture}
tmp=$(mktemp -d)
pids=()     # every fixture we started (each leads its own session: see start)

cleanup() {
        local p
        for p in "${pids[@]}"; do
                kill -KILL -- "-$p" 2>/dev/null
                kill -KILL "$p" 2>/dev/null
        done
        # Helpers in their own session are not in the group: the pid files name them.
        for f in "$tmp"/*.pid; do
                [ -f "$f" ] || continue
                while read -r p; do
                        [ -n "$p" ] && kill -KILL "$p" 2>/dev/null
                done <"$f"
        done
        wait 2>/dev/null
        rm -rf "$tmp"
}
trap cleanup EXIT

. "$SRCDIR/tests/assert.sh"
check() { # description, command...
        local what=$1; shift
        if "$@"; then echo "ok: $what"; else soft_fail "$what"; fi
}

# A pid is alive when it exists and is not a zombie (an orphan's zombie may linger where
# pid 1 does not reap).
alive() { [ -e "/proc/$1" ] && ! grep -q '^[0-9]* (.*) Z' "/proc/$1/stat" 2>/dev/null; }

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# start NAME ARGS...: starts the fixture on a free port in its own session (setsid(1)
# execs in place: the pid is the fixture's and the group id); sets PORT and PID. When
# another process takes the port between our probe and the bind, tries another port.
start() {
        local name=$1; shift
        local try
        for try in 1 2 3 4 5; do
                PORT=$((20000 + RANDOM % 30000))
                port_busy "$PORT" && continue
                setsid "$FIXTURE" --port "$PORT" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
                PID=$!
                pids+=("$PID")
                case " $* " in *" --no-listen-until-ready "*) return 0 ;; esac
                wait_until 5 eval 'port_busy "$PORT" || ! alive "$PID"'
                if ! alive "$PID" && grep -q 'cannot listen' "$tmp/$name.err"; then
                        wait "$PID" 2>/dev/null
                        continue
                fi
                return 0
        done
        return 1
}

# wait_until SECONDS COMMAND...: retries COMMAND every 50 ms.
wait_until() {
        local limit=$1; shift
        local end=$((SECONDS + limit + 1))
        while [ "$SECONDS" -lt "$end" ]; do
                "$@" && return 0
                sleep 0.05
        done
        return 1
}

health() { curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/health"; }
health_is() { [ "$(health)" = "$1" ]; }
chat() { # json body
        curl -s --max-time 5 "http://127.0.0.1:$PORT/v1/chat/completions" -H 'Content-Type: application/json' -d "$1"
}
# exits_with PID N: PID ends within 5 s with status N (as bash reports it: 128+signal).
exits_with() {
        wait_until 5 eval '! alive '"$1" || return 1
        wait "$1" 2>/dev/null
        local st=$?
        [ "$st" -eq "$2" ] || { echo "  pid $1 exited $st, wanted $2"; return 1; }
}
reap() { wait_until 5 eval '! alive '"$1"; wait "$1" 2>/dev/null; }
jqget() { # json, python-free field extraction with jansson-free tools: grep the field
        printf '%s' "$1" | grep -o "\"$2\":\"[^\"]*\"" | head -n 1 | sed "s/^\"$2\":\"//; s/\"\$//"
}

# --- usage -----------------------------------------------------------------------------
"$FIXTURE" --help | grep -- '--port P' >/dev/null || soft_fail "--help mentions --port"
"$FIXTURE" >/dev/null 2>&1; check "no --port is a usage error (2)" [ $? -eq 2 ]
"$FIXTURE" --port 1 --bogus >/dev/null 2>&1; check "unknown flag is a usage error (2)" [ $? -eq 2 ]

# --- health transitions, models, answers -----------------------------------------------
start main --load-time 0.6 --model test-model
wait_until 5 port_busy "$PORT" || soft_fail "main fixture listens"
check "health 503 while loading" health_is 503
check "health body says loading" [ "$(curl -s "http://127.0.0.1:$PORT/health")" = '{"status":"loading"}' ]
check "completions 503 while loading" [ "$(curl -s -o /dev/null -w '%{http_code}' \
        "http://127.0.0.1:$PORT/v1/completions" -d '{"prompt":"x"}')" = 503 ]
check "health becomes 200" wait_until 5 health_is 200
check "ready line printed" grep -qx "fixture: server is ready on http://127.0.0.1:$PORT" "$tmp/main.out"
check "loading line printed first" [ "$(head -n 1 "$tmp/main.out")" = "fixture: loading model" ]
models=$(curl -s "http://127.0.0.1:$PORT/v1/models")
check "models lists the model" [ "$models" = '{"object":"list","data":[{"id":"test-model","object":"model","owned_by":"fixture"}]}' ]

r=$(chat '{"messages":[{"role":"user","content":"What is 17 * 19?"}]}')
check "17 * 19 = 323" [ "$(jqget "$r" content)" = 323 ]
check "no reasoning without thinking" eval '! grep -q reasoning <<<"$r"'
check "finish_reason stop" grep -q '"finish_reason":"stop"' <<<"$r"
r=$(chat '{"messages":[{"role":"user","content":"Say it. Reply with exactly: OK"}]}')
check "Reply with exactly: OK" [ "$(jqget "$r" content)" = OK ]
r=$(chat '{"messages":[{"role":"user","content":"hello"}]}')
check "default answer" [ "$(jqget "$r" content)" = "I am a fixture." ]
r=$(chat '{"messages":[{"role":"user","content":"What is -3 * 4?"}],"chat_template_kwargs":{"enable_thinking":true}}')
check "thinking: answer" [ "$(jqget "$r" content)" = -12 ]
check "thinking: reasoning_content" [ "$(jqget "$r" reasoning_content)" = "The user asks for -3 * 4. -3 * 4 = -12." ]
r=$(chat '{"messages":[{"role":"user","content":"What is 2 * 3?"}],"chat_template_kwargs":{"enable_thinking":false}}')
check "thinking off: no reasoning" eval '! grep -q reasoning <<<"$r"'
r=$(curl -s "http://127.0.0.1:$PORT/v1/completions" -d '{"prompt":"What is 6 * 7?","max_tokens":16}')
check "completions text" [ "$(jqget "$r" text)" = 42 ]
r=$(curl -s "http://127.0.0.1:$PORT/v1/completions" -d '{"prompt":"hi","max_tokens":2}')
check "max_tokens cuts with length" eval '[ "$(jqget "$r" text)" = "I am" ] && grep -q "\"finish_reason\":\"length\"" <<<"$r"'
code=$(curl -s -o "$tmp/bad" -w '%{http_code}' "http://127.0.0.1:$PORT/v1/chat/completions" -d '{"messages":')
check "malformed JSON body -> 400" [ "$code" = 400 ]
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/v1/nothing")
check "unknown path -> 404" [ "$code" = 404 ]

# A stream: role chunk, one chunk per piece, finish chunk, usage, [DONE].
curl -sN --max-time 5 "http://127.0.0.1:$PORT/v1/chat/completions" \
        -d '{"messages":[{"role":"user","content":"hello"}],"stream":true,"stream_options":{"include_usage":true}}' \
        >"$tmp/stream"
events=$(grep -c '^data: ' "$tmp/stream")
check "stream has 8 events (role, 4 pieces, finish, usage, done)" [ "$events" -eq 8 ]
check "stream: first chunk is role only" eval 'grep -m1 "^data: " "$tmp/stream" | grep -q "\"delta\":{\"role\":\"assistant\",\"content\":\"\"}"'
text=$(grep -o '"delta":{"content":"[^"]*"' "$tmp/stream" | sed 's/.*"content":"//; s/"$//' | tr -d '\n')
check "stream pieces join to the answer" [ "$text" = "I am a fixture." ]
check "stream: usage chunk" grep -q '"usage":{"prompt_tokens":1,"completion_tokens":4,"total_tokens":5}' "$tmp/stream"
check "stream ends with [DONE]" [ "$(grep '^data: ' "$tmp/stream" | tail -n 1)" = "data: [DONE]" ]
curl -sN --max-time 5 "http://127.0.0.1:$PORT/v1/chat/completions" \
        -d '{"messages":[{"role":"user","content":"What is 2 * 2?"}],"stream":true,"chat_template_kwargs":{"enable_thinking":true}}' \
        >"$tmp/stream2"
check "stream: reasoning pieces before content" eval \
        '[ "$(grep -n reasoning_content "$tmp/stream2" | tail -n1 | cut -d: -f1)" -lt "$(grep -n "\"delta\":{\"content\":\"4\"" "$tmp/stream2" | cut -d: -f1)" ]'

kill -TERM "$PID"
check "SIGTERM: exit 0" exits_with "$PID" 0
check "SIGTERM: shutting down line" grep -qx "fixture: shutting down" "$tmp/main.out"

# --- scripted answers, reasoning field, NaN logprobs ---------------------------------------
start answers --answer 'A\xffB\u00e9' --answer-for 'magic=spell\tit' --reasoning-field reasoning \
        --reasoning 'Thinking hard.' --logprobs-nan --finish-reason length
wait_until 5 health_is 200 || soft_fail "answers fixture ready"
chat '{"messages":[{"role":"user","content":"x"}]}' >"$tmp/raw"
check "--answer decodes \\xNN and \\uXXXX to raw bytes" grep -q "\"content\":\"A$(printf '\xff')B$(printf '\xc3\xa9')\"" "$tmp/raw"
r=$(chat '{"messages":[{"role":"user","content":"a magic word"}],"thinking":true}')
check "--answer-for wins, escapes decoded" grep -qF '"content":"spell\tit"' <<<"$r"
check "--reasoning-field reasoning" [ "$(jqget "$r" reasoning)" = "Thinking hard." ]
check "--finish-reason" grep -q '"finish_reason":"length"' <<<"$r"
r=$(chat '{"messages":[{"role":"user","content":"a magic word"}],"logprobs":true}')
check "--logprobs-nan gives bare NaN" grep -q '"logprob":NaN' <<<"$r"
kill -TERM "$PID"; reap "$PID"

# --- broken HTTP behaviours --------------------------------------------------------------
start h500 --http-500
wait_until 5 health_is 200
check "--http-500" [ "$(curl -s -w ' %{http_code}' "http://127.0.0.1:$PORT/v1/completions" -d '{"prompt":"x"}')" = \
        '{"error":{"message":"Internal server error","code":500}} 500' ]
kill -TERM "$PID"; reap "$PID"

start sev --stream-error-event
wait_until 5 health_is 200
s=$(curl -sN "http://127.0.0.1:$PORT/v1/chat/completions" -d '{"messages":[{"role":"user","content":"x"}],"stream":true}')
check "--stream-error-event: first event is the error" eval \
        '[ "$(head -n 1 <<<"$s")" = "data: {\"error\":{\"code\":500,\"message\":\"The model produced output that does not match the expected format\"}}" ]'
check "--stream-error-event: non-stream 500" [ "$(curl -s -o /dev/null -w '%{http_code}' \
        "http://127.0.0.1:$PORT/v1/chat/completions" -d '{"messages":[{"role":"user","content":"x"}]}')" = 500 ]
kill -TERM "$PID"; reap "$PID"

start cut --close-mid-stream
wait_until 5 health_is 200
curl -sN --max-time 5 "http://127.0.0.1:$PORT/v1/chat/completions" \
        -d '{"messages":[{"role":"user","content":"x"}],"stream":true}' >"$tmp/cut"
rc=$?
check "--close-mid-stream: curl sees a cut transfer (18)" [ "$rc" -eq 18 ]
check "--close-mid-stream: 2 events, no [DONE]" eval '[ "$(grep -c "^data: " "$tmp/cut")" -eq 2 ] && ! grep -q DONE "$tmp/cut"'
kill -TERM "$PID"; reap "$PID"

start bad --malformed-sse
wait_until 5 health_is 200
s=$(curl -sN --max-time 5 "http://127.0.0.1:$PORT/v1/chat/completions" -d '{"messages":[{"role":"user","content":"x"}],"stream":true}')
check "--malformed-sse" eval '[ "$(head -n 1 <<<"$s")" = "data: {\"choices\":[{\"delta\":{\"content\":\"O" ]'
kill -TERM "$PID"; reap "$PID"

start stall --stall-after-chunks 2 --token-delay-ms 100
wait_until 5 health_is 200
t0=$(date +%s%N)
curl -sN --max-time 1.5 "http://127.0.0.1:$PORT/v1/chat/completions" \
        -d '{"messages":[{"role":"user","content":"x"}],"stream":true}' >"$tmp/stall"
rc=$?
check "--stall-after-chunks: curl times out (28)" [ "$rc" -eq 28 ]
check "--stall-after-chunks: exactly 2 events" [ "$(grep -c '^data: ' "$tmp/stall")" -eq 2 ]
# Requests run side by side (one thread per connection): a request is answered while a
# stalled stream still holds another connection open. (How long two delayed requests take
# together is a measurement, not a test: bench/fixture-concurrency.sh.)
curl -sN --max-time 4 "http://127.0.0.1:$PORT/v1/chat/completions" \
        -d '{"messages":[{"role":"user","content":"x"}],"stream":true}' >"$tmp/stall2" &
held=$!
wait_until 3 eval '[ "$(grep -c "^data: " "$tmp/stall2" 2>/dev/null)" -ge 2 ]'
curl -s --max-time 3 "http://127.0.0.1:$PORT/v1/completions" -d '{"prompt":"x"}' >"$tmp/c0"
check "requests run concurrently: answered while a stalled stream is open" \
        eval 'grep -q "I am a fixture." "$tmp/c0" && kill -0 '"$held"' 2>/dev/null'
wait "$held" 2>/dev/null
# Non-streamed with a delay of 100 ms per piece: 4 pieces take >= 400 ms.
t0=$(date +%s%N)
curl -s --max-time 5 "http://127.0.0.1:$PORT/v1/completions" -d '{"prompt":"x"}' >"$tmp/c1" &
c1=$!
curl -s --max-time 5 "http://127.0.0.1:$PORT/v1/completions" -d '{"prompt":"x"}' >"$tmp/c2"
wait "$c1"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
echo "two concurrent delayed requests: ${ms} ms"
check "--token-delay-ms slows non-stream (>= 400 ms)" [ "$ms" -ge 400 ]
check "both delayed answers complete" eval 'grep -q "I am a fixture." "$tmp/c1" && grep -q "I am a fixture." "$tmp/c2"'
kill -TERM "$PID"
check "SIGTERM with a stalled stream still exits 0" exits_with "$PID" 0

start hang --hang-requests
wait_until 5 health_is 200
curl -s --max-time 0.5 "http://127.0.0.1:$PORT/v1/completions" -d '{"prompt":"x"}' >/dev/null
check "--hang-requests: curl times out (28)" [ $? -eq 28 ]
check "--hang-requests: health still answers" health_is 200
kill -TERM "$PID"; reap "$PID"

# --- process behaviours ------------------------------------------------------------------
# start returns before such a fixture binds: when another process took the port in the
# meantime (it says "cannot listen"), another port
for try in 1 2 3 4 5; do
        start nl --no-listen-until-ready --load-time 0.5 --never-ready
        sleep 0.2
        port_closed=0
        port_busy "$PORT" || port_closed=1
        wait_until 5 eval 'port_busy "$PORT" || ! alive "$PID"'
        alive "$PID" || ! grep -q 'cannot listen' "$tmp/nl.err" && break
        reap "$PID"
done
check "--no-listen-until-ready: port closed while loading" [ "$port_closed" = 1 ]
check "--never-ready: listens after load" wait_until 5 port_busy "$PORT"
sleep 0.2
check "--never-ready: still 503" health_is 503
kill -TERM "$PID"; reap "$PID"

start die --die-at-load --load-time 0.1 --log 'first line' --log 'torch.OutOfMemoryError: CUDA out of memory\nsecond' --exit-code 3
check "--die-at-load: exit code 3" exits_with "$PID" 3
check "--die-at-load: logs on stderr in order" eval \
        '[ "$(cat "$tmp/die.err")" = "$(printf "first line\ntorch.OutOfMemoryError: CUDA out of memory\nsecond")" ]'

start dsig --die-at-load --die-signal SIGKILL
check "--die-signal SIGKILL: killed (137)" exits_with "$PID" 137
start dsig2 --die-at-load --die-signal 6
check "--die-signal 6: aborted (134)" exits_with "$PID" 134

start cc --child-crash-exit-zero --load-time 0.1 --log 'RuntimeError: CUDA error: an illegal memory access was encountered'
check "--child-crash-exit-zero: exit 0" exits_with "$PID" 0
check "--child-crash-exit-zero: the child's log" grep -q 'illegal memory access' "$tmp/cc.err"
check "--child-crash-exit-zero: parent line" grep -qx 'fixture: child died, shutting down' "$tmp/cc.err"

start dar --die-after-requests 1
wait_until 5 health_is 200
r=$(curl -s "http://127.0.0.1:$PORT/v1/completions" -d '{"prompt":"x"}')
check "--die-after-requests 1: first answered" grep -q 'I am a fixture.' <<<"$r"
curl -s --max-time 3 "http://127.0.0.1:$PORT/v1/completions" -d '{"prompt":"x"}' >/dev/null
check "--die-after-requests 1: second request fails" [ $? -ne 0 ]
check "--die-after-requests: exit 1" exits_with "$PID" 1
check "--die-after-requests: default CUDA log" grep -qx 'RuntimeError: CUDA error: an illegal memory access was encountered' "$tmp/dar.err"

start ea --exit-after 0.3
check "--exit-after: exit 0" exits_with "$PID" 0

start logs --log 'WARNING: something odd'
wait_until 5 health_is 200
check "--log without death: printed at start" grep -qx 'WARNING: something odd' "$tmp/logs.err"
kill -TERM "$PID"; reap "$PID"

start ign --ignore-sigterm
wait_until 5 health_is 200
kill -TERM "$PID"
sleep 0.3
check "--ignore-sigterm: survives SIGTERM" alive "$PID"
kill -KILL "$PID"
check "--ignore-sigterm: SIGKILL ends it (137)" exits_with "$PID" 137

# Helpers in the fixture's process group die with the group.
start grp --helpers 2 --pid-file "$tmp/grp.pid"
wait_until 5 health_is 200
mapfile -t gp <"$tmp/grp.pid"
check "pid file: server then 2 helpers" eval '[ "${#gp[@]}" -eq 3 ] && [ "${gp[0]}" = "$PID" ]'
check "helpers alive" eval 'alive "${gp[1]}" && alive "${gp[2]}"'
kill -TERM "${gp[1]}"; kill -HUP "${gp[1]}"
sleep 0.2
check "helper ignores SIGTERM and SIGHUP" alive "${gp[1]}"
kill -KILL -- "-$PID"
reap "$PID"
check "SIGKILL of the group ends the helpers" wait_until 3 eval '! alive "${gp[1]}" && ! alive "${gp[2]}"'

# A helper in its own session outlives the group kill: only its pid (from the file) ends it.
start ses --spawn-helper --helper-setsid --pid-file "$tmp/ses.pid" --log 'x'
wait_until 5 health_is 200
mapfile -t sp <"$tmp/ses.pid"
check "setsid helper: in the pid file" [ "${#sp[@]}" -eq 2 ]
check "setsid helper: own session" eval '[ "$(ps -o sid= -p "${sp[1]}" | tr -d " ")" = "${sp[1]}" ]'
kill -KILL -- "-$PID"
check "setsid helper: server dead" exits_with "$PID" 137
sleep 0.2
check "setsid helper: survives the group kill" alive "${sp[1]}"
kill -KILL "${sp[1]}"
check "setsid helper: gone after kill by pid" wait_until 3 eval '! alive "${sp[1]}"'

# Nothing we started is left.
for p in "${pids[@]}"; do alive "$p" && soft_fail "fixture $p still running"; done
for f in "$tmp"/*.pid; do
        while read -r p; do alive "$p" && soft_fail "helper $p still running"; done <"$f"
done

finish fixture

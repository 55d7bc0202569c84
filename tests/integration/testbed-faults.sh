#!/usr/bin/env bash
# tier: faults (tests/run faults)
# testbed-faults.sh -- the testbed's faults that only some requests see (docs/testbed.md):
# each flag leaves every other request exactly as a server without it answers, and breaks
# the ones in its condition the way the field reports did. Also --token-delay (an honest
# slow server) and the KV cache usage /metrics reports while a generation runs.
#
# Needs the trained model (testbed/model.gguf): the answers are what is checked.
set -u
: "${TESTBED:?}" "${SRCDIR:?}"
tmp=$(mktemp -d)
pids=()
cleanup() {
        for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
        rm -rf "$tmp"
}
trap cleanup EXIT
. "$SRCDIR/tests/assert.sh"

model="$SRCDIR/testbed/model.gguf"
if [ ! -f "$model" ]; then
        echo "SKIP: testbed/model.gguf is not there: the answers cannot be checked"
        exit 77
fi

# start NAME ARGS...: a testbed on a free port, ready; sets port_NAME
start() {
        local name=$1; shift
        local log="$tmp/$name.log"
        fail_log=$log
        "$TESTBED" --model "$model" --port 0 "$@" >"$log" 2>&1 &
        pids+=("$!")
        local deadline=$((SECONDS + 15))
        while [ $SECONDS -lt $deadline ]; do
                if grep -q "listening on http://" "$log"; then
                        printf -v "port_$name" '%s' "$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log")"
                        return 0
                fi
                sleep 0.05
        done
        fail "$name did not become ready"
}
# req PORT ENDPOINT JSON -> the response body
req() { curl -s --max-time 60 -H 'Content-Type: application/json' -d "$3" "http://127.0.0.1:$1$2"; }
# answer PORT JSON -> "content|finish_reason|completion_tokens"
answer() {
        req "$1" /v1/chat/completions "$2" | python3 -c '
import sys, json
d = json.load(sys.stdin); c = d["choices"][0]
print("%s|%s|%d" % (c["message"]["content"], c["finish_reason"], d["usage"]["completion_tokens"]))'
}
# user TEXT [EXTRA] -> a one-message chat body (TEXT is JSON-escaped by the caller)
user() { printf '{"messages":[{"role":"user","content":"%s"}],"max_tokens":24%s}' "$1" "${2:-}"; }
greedy=',"temperature":0'
sampled=',"temperature":0.7,"top_p":0.95,"seed":7'

start plain --threads 4
P=$port_plain
[ "$(answer $P "$(user 'What is 17 * 19?' "$greedy")")" = "323|stop|4" ] || fail "plain: 17 * 19"
[ "$(answer $P "$(user 'What is 17 * 19?' "$sampled")")" = "323|stop|4" ] || fail "plain: 17 * 19 sampled"

# ---- --fault-context N: '+' from the N-th token of context on, nothing before
start ctx --fault-context 60
C=$port_ctx
filler="The quick brown fox jumps over the lazy dog. "
short=$(user 'Reply with exactly: OK' "$greedy")
long=$(user "$filler$filler Reply with exactly: OK" "$greedy")    # prompt past 60 tokens
[ "$(answer $C "$short")" = "$(answer $P "$short")" ] || fail "context: a short prompt changed: $(answer $C "$short")"
[ "$(answer $C "$long")" = "++++++++++++++++++++++++|length|24" ] || fail "context: past 60 tokens: $(answer $C "$long")"
[ "$(answer $P "$long")" = "OK|stop|3" ] || fail "context: the plain server does not answer the long prompt: $(answer $P "$long")"
# a generation that crosses the line: the same tokens as the plain server up to it, then '+'
cross='{"prompt":"Count to 30.","max_tokens":80,"ignore_eos":true,"temperature":0,"logprobs":1}'
req $P /v1/completions "$cross" >"$tmp/cross.plain"
req $C /v1/completions "$cross" >"$tmp/cross.ctx"
python3 - "$tmp/cross.plain" "$tmp/cross.ctx" <<'EOF' || fail "context: crossing 60 tokens: $(cat "$tmp/cross.ctx")"
import sys, json
plain, ctx = (json.load(open(f)) for f in sys.argv[1:])
n = 60 - plain["usage"]["prompt_tokens"]
a, b = (d["choices"][0]["logprobs"]["tokens"] for d in (plain, ctx))
assert 0 < n < 80 and b[:n] == a[:n] and b[n:] == ["+"] * (80 - n), (n, a, b)
assert "+" not in a and ctx["choices"][0]["finish_reason"] == "length"
EOF

# ---- --fault-sampling: salad at temperature > 0 only, the same for a seed
start samp --fault-sampling
S=$port_samp
[ "$(answer $S "$(user 'What is 17 * 19?' "$greedy")")" = "323|stop|4" ] || fail "sampling: greedy changed"
a1=$(answer $S "$(user 'What is 17 * 19?' "$sampled")")
a2=$(answer $S "$(user 'What is 17 * 19?' "$sampled")")
[ "$a1" = "$a2" ] || fail "sampling: one seed, two salads: '$a1' / '$a2'"
python3 - "$a1" <<'EOF' || fail "sampling: not mixed-script salad: $a1"
import sys, unicodedata
text, finish, n = sys.argv[1].rsplit("|", 2)
assert finish == "length" and n == "24", (finish, n)
scripts = {unicodedata.name(c, "?").split()[0] for c in text if ord(c) > 0x7f}
assert len(scripts) >= 3, scripts
assert any(c.isascii() and c.isalpha() for c in text), text
EOF
b=$(answer $S "$(user 'What is 17 * 19?' ',"temperature":0.7,"top_p":0.95,"seed":8')")
[ "$b" != "$a1" ] || fail "sampling: another seed gave the same salad"

# ---- --fault-turn N: chats with N user turns or more end in '!!!!'
start turn --fault-turn 3
T=$port_turn
two='{"messages":[{"role":"user","content":"Remember the number 42."},{"role":"assistant","content":"OK"},{"role":"user","content":"What is 17 * 19?"}],"max_tokens":24,"temperature":0}'
three='{"messages":[{"role":"user","content":"Remember the number 42."},{"role":"assistant","content":"OK"},{"role":"user","content":"Reply with exactly: OK"},{"role":"assistant","content":"OK"},{"role":"user","content":"What is 17 * 19?"}],"max_tokens":24,"temperature":0}'
[ "$(answer $T "$two")" = "$(answer $P "$two")" ] || fail "turn: two user turns changed: $(answer $T "$two")"
[ "$(answer $P "$three")" = "323|stop|4" ] || fail "turn: the plain server with three turns: $(answer $P "$three")"
case "$(answer $T "$three")" in *'!!!!!!!!|length|24') ;; *) fail "turn: three user turns: $(answer $T "$three")" ;; esac
[ "$(answer $T "$(user 'What is 17 * 19?' "$greedy")")" = "323|stop|4" ] || fail "turn: one turn changed"

# ---- --fault-batch N: right alone and with fewer at once, digits wrong with N at once
# 250 ms a token: the three requests overlap for a second even when curl starts late on
# a loaded machine (at 60 ms the third once started after the first had ended)
start batch --threads 4 --fault-batch 3 --token-delay 250
B=$port_batch
q=$(user 'What is 17 * 19?' "$greedy")
[ "$(answer $B "$q")" = "323|stop|4" ] || fail "batch: alone"
for n in 2 3; do
        bp=()
        for i in $(seq $n); do answer $B "$q" >"$tmp/b$n.$i" & bp+=($!); done
        wait "${bp[@]}"
done
for i in 1 2; do [ "$(cat "$tmp/b2.$i")" = "323|stop|4" ] || fail "batch: two at once: $(cat "$tmp/b2.$i")"; done
for i in 1 2 3; do [ "$(cat "$tmp/b3.$i")" = "313|stop|4" ] || fail "batch: three at once: $(cat "$tmp/b3.$i")"; done

# ---- --token-delay: the same answers, later; the KV cache usage while one runs
start slow --token-delay 20
L=$port_slow
t0=$(date +%s%N)
[ "$(answer $L "$(user 'Count to 10.' "$greedy")")" = "$(answer $P "$(user 'Count to 10.' "$greedy")")" ] || fail "slow: answer changed"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[ "$ms" -ge $((21 * 20)) ] || fail "slow: 21 tokens took only $ms ms with 20 ms each"
req $L /v1/completions '{"prompt":"Count to 30.","max_tokens":100,"ignore_eos":true,"temperature":0}' >/dev/null &
bg=$!
sleep 1
curl -s "http://127.0.0.1:$L/metrics" >"$tmp/m"
wait $bg
python3 - "$tmp/m" <<'EOF' || fail "slow: KV usage mid-generation: $(grep -E '^vllm:(kv|num_requests_running)' "$tmp/m")"
import sys
v = {l.split("{")[0]: float(l.split()[-1]) for l in open(sys.argv[1]) if l.startswith("vllm:")}
assert v["vllm:num_requests_running"] == 1, v
# 13 prompt tokens and up to 100 generated, over 4 slots of 256
assert 20 / 1024 < v["vllm:kv_cache_usage_perc"] <= 113 / 1024, v["vllm:kv_cache_usage_perc"]
EOF

# ---- bad values are usage errors
"$TESTBED" --fault-turn 1 >/dev/null 2>&1; [ $? -eq 2 ] || fail "--fault-turn 1 is not a usage error"
"$TESTBED" --fault-batch 8 --threads 4 >/dev/null 2>"$tmp/e"; [ $? -eq 2 ] || fail "--fault-batch 8 with --threads 4 is not a usage error"
grep -q "never run at once" "$tmp/e" || fail "--fault-batch message: $(cat "$tmp/e")"
"$TESTBED" --token-delay soon >/dev/null 2>&1; [ $? -eq 2 ] || fail "--token-delay soon is not a usage error"
echo "testbed-faults: all checks passed"

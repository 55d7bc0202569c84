#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# bench-sessions.sh -- multi-turn sessions and trace replay (docs/bench.md "Workloads"),
# against gauntlet-schedsrv logging every request body (--log-requests) and answering each
# request with text of its own (--tag-content): turn k sends the answers the server gave to
# turns < k, think time is kept, concurrency counts sessions, a failed turn ends its
# session; a Mooncake trace goes out at its timestamps (within the measured send delay) and
# at speed 2, with its hash_ids blocks shared; a sweep of the testbed with both workloads
# keeps its checks under load; bad files and flags, one line each.
set -euo pipefail
: "${TESTBED:?}" "${SRCDIR:?}" "${GAUNTLET:?}"
SCHEDSRV=${SCHEDSRV:-$(dirname "$GAUNTLET")/gauntlet-schedsrv}
tmp=$(mktemp -d)
pids=()
cleanup() {
        for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
        rm -rf "$tmp"
}
trap cleanup EXIT
. "$SRCDIR/tests/assert.sh"

start_schedsrv() { # name, args...: sets $ss to its URL
        local name=$1; shift
        rm -f "$tmp/$name.port"
        "$SCHEDSRV" --port-file "$tmp/$name.port" --tag-content --log-requests "$tmp/$name.log" "$@" \
                >"$tmp/$name.out" 2>&1 &
        pids+=($!)
        for _ in $(seq 100); do [ -s "$tmp/$name.port" ] && break; sleep 0.05; done
        [ -s "$tmp/$name.port" ] || fail "schedsrv did not start: $(cat "$tmp/$name.out")"
        ss="http://127.0.0.1:$(cat "$tmp/$name.port")"
}

# 1. multi_turn: 5 sessions of 3 turns, 150 ms think time, 2 sessions at a time
start_schedsrv mt --ttft-ms 2 --itl-ms 1
"$GAUNTLET" bench --url "$ss" --no-calibrate --dataset-name multi_turn --multi-turn-turns 3 \
        --multi-turn-input-len 6 --multi-turn-output-len 3 --multi-turn-think-time 150ms --num-prompts 5 \
        --concurrency 2 --samples "$tmp/mt.samples" --format json >"$tmp/mt.json"
jq -e '.bench[0] | .requests == 15 and .completed == 15 and .failed == 0
        and .sessions == {started: 5, completed: 5, ended_by_failure: 0, cut: 0, turns: 15}
        and .workload.dataset == "multi_turn" and .workload.multi_turn.sessions == 5
        and .workload.multi_turn.think_time_ms == 150 and .workload.prompts == 15' "$tmp/mt.json" >/dev/null \
        || fail "multi_turn level: $(jq -c '.bench[0] | {requests, completed, failed, sessions, workload}' "$tmp/mt.json")"
jq -e 'length == 15 and ([.[] | .turn] | sort) == [1,1,1,1,1,2,2,2,2,2,3,3,3,3,3]
        and ([.[] | .session] | unique) == [0,1,2,3,4]' "$tmp/mt.samples" >/dev/null \
        || fail "samples: $(jq -c '[.[] | [.session, .turn]]' "$tmp/mt.samples")"
# Each body, checked against the server's own log: its assistant messages are the answers
# the server streamed to the earlier turns of the same conversation, its think time was
# kept, and at most 2 sessions were ever open (and 2 were).
"$SRCDIR/tests/sessions-check.py" "$tmp/mt.log" --think 150 --sessions 5 --turns 3 --open 2 ||
        fail "multi_turn bodies: see above"

# a failed turn ends its session: every 2nd request fails, one session at a time, so each
# session's second turn fails and its third is never sent
start_schedsrv fail --ttft-ms 1 --itl-ms 1 --fail-every 2
"$GAUNTLET" bench --url "$ss" --no-calibrate --dataset-name multi_turn --multi-turn-turns 3 \
        --multi-turn-input-len 4 --multi-turn-output-len 2 --num-prompts 3 --concurrency 1 --format json >"$tmp/fail.json"
jq -e '.bench[0] | .requests == 6 and .failed == 3 and .completed == 3
        and .sessions == {started: 3, completed: 0, ended_by_failure: 3, cut: 0, turns: 6}' "$tmp/fail.json" >/dev/null \
        || fail "failed turns: $(jq -c '.bench[0] | {requests, failed, sessions}' "$tmp/fail.json")"

# 2. a trace: 8 lines over 400 ms, two sharing their first block, replayed at its times
cat >"$tmp/trace.jsonl" <<'EOF'
{"timestamp": 0, "input_length": 40, "output_length": 2, "hash_ids": [7, 8, 9]}
{"timestamp": 50, "input_length": 30, "output_length": 3, "hash_ids": [7, 10]}
{"timestamp": 50, "input_length": 12, "output_length": 2}

{"timestamp": 120, "input_length": 20, "output_length": 2, "hash_ids": [11, 12]}
{"timestamp": 200.5, "input_length": 8, "output_length": 1, "hash_ids": [13]}
{"timestamp": 260, "input_length": 9, "output_length": 2}
{"timestamp": 300, "input_length": 16, "output_length": 4, "hash_ids": [7]}
{"timestamp": 400, "input_length": 5, "output_length": 2}
EOF
start_schedsrv tr --ttft-ms 2 --itl-ms 1
"$GAUNTLET" bench --url "$ss" --no-calibrate --dataset-name trace --dataset-path "$tmp/trace.jsonl" \
        --trace-block-size 16 --concurrency 8 --samples "$tmp/tr.samples" --format json >"$tmp/tr.json"
jq -e '.bench[0] | .requests == 8 and .completed == 8 and .workload.arrivals == "trace"
        and .workload.trace == {lines: 8, speed: 1, block_size: 16, span_s: 0.4, hash_ids: 9}
        and .workload.input_tokens.min == 5 and .workload.input_tokens.max == 40' "$tmp/tr.json" >/dev/null \
        || fail "trace level: $(jq -c '.bench[0] | {requests, completed, workload}' "$tmp/tr.json")"
# Each line against the server's log. The client says it sent line i at the trace's time
# plus its measured send delay (its own clock); the server read it a little after
# (loopback, its own turn on a busy CPU). Times from the smallest such lag: every line
# must reach the server at its time plus its send delay, plus at most 10 ms of jitter.
cat >"$tmp/trace-check.py" <<'PY'
import json, sys
samples = json.load(open(sys.argv[1]))
log = [json.loads(l) for l in open(sys.argv[2])]
trace = [json.loads(l) for l in open(sys.argv[3]) if l.strip()]
speed = float(sys.argv[4])
got = {r["rid"]: r for r in log if "rid" in r}
bad = 0
sent = sorted(samples, key=lambda s: int(s["request_id"].rsplit("-", 1)[1]))
if len(sent) != len(trace):
    print("sent", len(sent), "of", len(trace)); sys.exit(1)
lag = lambda s, want: got[s["request_id"]]["t_us"] / 1000 - want - s["send_delay_ms"]
t0 = min(lag(s, l["timestamp"] / speed) for s, l in zip(sent, trace)) * 1000
for s, line in zip(sent, trace):
    want = line["timestamp"] / speed
    if abs(s["scheduled_ms"] - want) > 0.01:
        print("speed", speed, ": scheduled", s["scheduled_ms"], "want", want); bad += 1
    at = (got[s["request_id"]]["t_us"] - t0) / 1000
    if not (want <= at <= want + s["send_delay_ms"] + 10):
        print("speed", speed, ": line at", want, "ms reached the server at", at, "ms, send delay", s["send_delay_ms"])
        bad += 1
    if s["output_tokens"] != line["output_length"]:
        print("output", s["output_tokens"], "want", line["output_length"]); bad += 1
if speed == 1:
    # lines sharing hash id 7 share its block's text; a line without hash_ids shares none
    text = {tuple(l.get("hash_ids") or []): got[s["request_id"]]["body"]["messages"][0]["content"]
            for s, l in zip(sent, trace)}
    a, b, c, d = text[(7, 8, 9)], text[(7, 10)], text[(7,)], text[(11, 12)]
    common = lambda x, y: next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
    if common(a, b) < 40 or common(a, d) > 16 or not a.startswith(c):
        print("blocks not shared as the hash_ids say:", repr(a[:80]), repr(b[:80]), repr(c[:80])); bad += 1
sys.exit(1 if bad else 0)
PY
python3 "$tmp/trace-check.py" "$tmp/tr.samples" "$tmp/tr.log" "$tmp/trace.jsonl" 1 || fail "trace at its times: see above"
: >"$tmp/tr.log" # the server appends: emptied, not removed
"$GAUNTLET" bench --url "$ss" --no-calibrate --dataset-name trace --dataset-path "$tmp/trace.jsonl" \
        --trace-speed 2 --concurrency 8 --samples "$tmp/tr2.samples" >"$tmp/tr2.out"
grep -q '^workload: trace, 8 prompts; .*arrivals trace$' "$tmp/tr2.out" || fail "trace text: $(cat "$tmp/tr2.out")"
python3 "$tmp/trace-check.py" "$tmp/tr2.samples" "$tmp/tr.log" "$tmp/trace.jsonl" 2 || fail "trace at speed 2: see above"

# 3. a sweep of the testbed: both workloads sized in its tokens, the checks still sent
# amid the load at every level
model="$SRCDIR/testbed/model.gguf"
if [ ! -f "$model" ]; then
        model="$tmp/random.gguf"
        "$TESTBED" --write-random-model "$model" || fail "cannot write a random model"
fi
cp "$tmp/trace.jsonl" "$tmp/t.jsonl"
for ds in "{name: multi_turn, num_prompts: 3, multi_turn_turns: 2, multi_turn_input_len: 12, multi_turn_output_len: 6, multi_turn_think_time: 20ms}" \
          "{name: trace, path: t.jsonl, trace_block_size: 16, trace_speed: 4}"; do
        cat >"$tmp/m.yaml" <<YAML
engine: testbed
model: $model
startup_timeout: 20s
request_timeout: 30s
checks: default
bench:
  concurrency: [2]
  warmup: 0
  dataset: $ds
objective: output_tokens_per_s@2
YAML
        rm -f "$tmp/j.db"
        "$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/run.out" 2>&1 || fail "run $ds: $(tail -5 "$tmp/run.out")"
        "$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/report.json"
        jq -e '.cells[0].bench[0] | .failed == 0 and .completed > 0 and (.checks_under_load | length) > 0
                and all(.checks_under_load[]; .verdict == "pass")
                and .workload.input_tokens.as == "asked, sized"' "$tmp/report.json" >/dev/null \
                || fail "sweep $ds: $(jq -c '.cells[0].bench[0] | {completed, failed, checks_under_load, workload, first_error}' "$tmp/report.json")"
done
jq -e '.cells[0].bench[0].workload.trace.lines == 8' "$tmp/report.json" >/dev/null || fail "trace sweep"

# 4. bad input: one line, exit 2
bad() { # want-fragment args...
        local want=$1; shift
        set +e
        "$GAUNTLET" bench --url "$ss" "$@" >"$tmp/bad.out" 2>"$tmp/bad.err"
        local rc=$?
        set -e
        [ "$rc" -eq 2 ] || fail "$*: exit $rc, want 2"
        [ "$(wc -l <"$tmp/bad.err")" -le 2 ] || fail "$*: more than one message: $(cat "$tmp/bad.err")"
        grep -qF -- "$want" "$tmp/bad.err" || fail "$*: got $(cat "$tmp/bad.err"), want $want"
}
printf '%s\n' '{"timestamp": 5, "input_length": 3, "output_length": 1}' '{"timestamp": 4, "input_length": 3, "output_length": 1}' >"$tmp/order.jsonl"
bad "gauntlet: $tmp/order.jsonl:2: timestamp 4 is before the previous line's 5" --dataset-name trace --dataset-path "$tmp/order.jsonl"
printf '%s\n' '{"timestamp": 5, "input_length": 3, "output_length": 1}' '{"timestamp": 6, "input_length": 3,' >"$tmp/broken.jsonl"
bad "gauntlet: $tmp/broken.jsonl:2: malformed JSON" --dataset-name trace --dataset-path "$tmp/broken.jsonl"
printf '%s\n' '' '{"timestamp": 5, "output_length": 1}' >"$tmp/field.jsonl"
bad "gauntlet: $tmp/field.jsonl:2: no \"input_length\"" --dataset-name trace --dataset-path "$tmp/field.jsonl"
printf '[\n{"conversations": []},\n{"conversations": [{"from": "human", "value": "hi"}]}\n]\n' >"$tmp/empty.json"
bad "gauntlet: $tmp/empty.json:1: no conversation has a human turn and a reply (2 entries" --dataset-name multi_turn --dataset-path "$tmp/empty.json"
printf '[\n{"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt"}]}\n]\n' >"$tmp/novalue.json"
bad "gauntlet: $tmp/novalue.json:2: entry 1: turn 2 is not an object with a \"value\" string" --dataset-name multi_turn --dataset-path "$tmp/novalue.json"
bad "this dataset needs a file" --dataset-name trace
bad "needs --endpoint chat" --dataset-name multi_turn --endpoint completion
bad "the trace says when requests go" --dataset-name trace --dataset-path "$tmp/trace.jsonl" --rate 5
bad "invalid --trace-speed '0'" --dataset-name trace --dataset-path "$tmp/trace.jsonl" --trace-speed 0
bad "invalid --multi-turn-think-time 'soon'" --dataset-name multi_turn --multi-turn-think-time soon
bad "invalid --multi-turn-turns '0'" --dataset-name multi_turn --multi-turn-turns 0
echo "bench-sessions: ok"

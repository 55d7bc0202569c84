#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# bench-dataset.sh -- workloads (docs/bench.md "Workloads"): a ShareGPT file against the
# testbed, its prompt and output lengths in the server's own tokens; a sweep whose matrix
# says bench: {dataset: ...}; prefix_repetition, custom and gamma arrivals against
# gauntlet-schedsrv; bad files and flags, one line each.
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

model="$SRCDIR/testbed/model.gguf"
if [ ! -f "$model" ]; then
        model="$tmp/random.gguf"
        "$TESTBED" --write-random-model "$model" || fail "cannot write a random model"
fi

# A ShareGPT file of 30 conversations (prompt and reply 2-12 words each), plus an empty
# one and a one-turn one that are skipped, and a long one the length filter drops.
python3 - "$tmp/sg.json" <<'PY'
import json, random, sys
rng = random.Random(5)
words = ["alpha", "beta", "gamma", "delta", "river", "stone", "light", "cloud"]
conv = []
for i in range(30):
    p = " ".join(rng.choice(words) for _ in range(rng.randint(2, 12)))
    r = " ".join(rng.choice(words) for _ in range(rng.randint(2, 12)))
    conv.append({"id": str(i), "conversations": [{"from": "human", "value": p}, {"from": "gpt", "value": r},
                                                 {"from": "human", "value": "more"}]})
conv.append({"id": "empty", "conversations": []})
conv.append({"id": "one", "conversations": [{"from": "human", "value": "hello"}]})
conv.append({"id": "long", "conversations": [{"from": "human", "value": "xy " * 70}, {"from": "gpt", "value": "ok ok ok ok"}]})
json.dump(conv, open(sys.argv[1], "w"), indent=1)
PY

# 1. gauntlet bench --dataset-name sharegpt against the testbed (no tokenize endpoint: the
# lengths are learnt from usage.prompt_tokens less the template's share)
"$TESTBED" --model "$model" --port 0 >"$tmp/tb.log" 2>&1 &
pids+=($!)
port=
for _ in $(seq 200); do
        port=$(sed -n 's/.*listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/tb.log" | head -1)
        [ -n "$port" ] && break
        sleep 0.05
done
[ -n "$port" ] || fail "testbed did not start: $(cat "$tmp/tb.log")"
url="http://127.0.0.1:$port"
"$GAUNTLET" bench --url "$url" --engine testbed --dataset-name sharegpt --dataset-path "$tmp/sg.json" \
        --num-prompts 40 --sharegpt-max-prompt-len 200 --concurrency 4 --requests 30 --seed 3 \
        --samples "$tmp/sg.samples" --format json >"$tmp/sg.json.out"
jq -e '.bench[0] | .completed == 30 and .failed == 0' "$tmp/sg.json.out" >/dev/null \
        || fail "sharegpt: $(jq -c '.bench[0] | {completed, failed, first_error}' "$tmp/sg.json.out")"
w=$(jq -c '.bench[0].workload' "$tmp/sg.json.out")
jq -e '.dataset == "sharegpt" and .entries == 33 and .prompts == 30 and .skipped.no_reply == 2
        and .skipped.filtered == 1 and .input_tokens.as == "measured"' <<<"$w" >/dev/null || fail "workload: $w"
tmpl=$(jq '.bench[0].prompt_calibration.template_tokens' "$tmp/sg.json.out")
[ "$tmpl" -ge 0 ] || fail "template tokens: $tmpl"
# each length in the server's tokens: ask the server for each text of the file, as a user
# message with one output token (prompt_tokens less the template's share)
count() {
        curl -sf "$url/v1/chat/completions" -H 'Content-Type: application/json' \
                -d "$(jq -nc --arg t "$1" '{messages: [{role: "user", content: $t}], max_tokens: 1}')" \
                | jq ".usage.prompt_tokens - $tmpl"
}
want_out=() want_in=()
for i in $(seq 0 29); do
        want_in+=("$(( $(count "$(jq -r ".[$i].conversations[0].value" "$tmp/sg.json")") + tmpl ))")
        want_out+=("$(count "$(jq -r ".[$i].conversations[1].value" "$tmp/sg.json")")")
done
got_out=$(jq -c '[.[].output_tokens] | sort' "$tmp/sg.samples")
got_in=$(jq -c '[.[].prompt_tokens] | sort' "$tmp/sg.samples")
[ "$got_out" = "$(printf '%s\n' "${want_out[@]}" | jq -sc 'sort')" ] || fail "output lengths: got $got_out, want ${want_out[*]}"
[ "$got_in" = "$(printf '%s\n' "${want_in[@]}" | jq -sc 'sort')" ] || fail "prompt lengths: got $got_in, want ${want_in[*]}"
# the same seed, the same sample and order; the text output names the workload
"$GAUNTLET" bench --url "$url" --engine testbed --dataset-name sharegpt --dataset-path "$tmp/sg.json" \
        --sharegpt-max-output-len 10 --num-prompts 5 --concurrency 1 --seed 3 --samples "$tmp/sg2.samples" >"$tmp/sg2.out"
grep -q '^workload: sharegpt, 5 prompts; input .* tokens (measured), output [0-9]*-10; arrivals closed_loop$' "$tmp/sg2.out" \
        || fail "text: $(cat "$tmp/sg2.out")"
jq -e 'length == 5 and all(.output_tokens <= 10)' "$tmp/sg2.samples" >/dev/null || fail "cap: $(jq -c '[.[].output_tokens]' "$tmp/sg2.samples")"

# 2. a sweep whose matrix says bench: {dataset: ...}; the file beside the matrix
cp "$tmp/sg.json" "$tmp/conv.json"
cat >"$tmp/m.yaml" <<YAML
engine: testbed
model: $model
startup_timeout: 20s
request_timeout: 30s
checks: default
bench:
  concurrency: [2]
  warmup: 0
  dataset: {name: sharegpt, path: conv.json, num_prompts: 12, seed: 4, sharegpt_max_prompt_len: 200}
objective: output_tokens_per_s@2
YAML
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/run.out" 2>&1 || fail "run: $(tail -5 "$tmp/run.out")"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/report.json"
jq -e '.cells[0].bench[0] | .completed == 12 and .workload.dataset == "sharegpt" and .workload.prompts == 12' \
        "$tmp/report.json" >/dev/null || fail "matrix: $(jq -c '.cells[0].bench[0] | {completed, workload}' "$tmp/report.json")"

# 3. prefix_repetition, custom and gamma arrivals against schedsrv (no sizing: words)
rm -f "$tmp/ss.port"
"$SCHEDSRV" --port-file "$tmp/ss.port" --ttft-ms 1 --itl-ms 1 >"$tmp/ss.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/ss.port" ] && break; sleep 0.05; done
ss="http://127.0.0.1:$(cat "$tmp/ss.port")"
"$GAUNTLET" bench --url "$ss" --no-calibrate --dataset-name prefix_repetition --prefix-repetition-prefix-len 50 \
        --prefix-repetition-suffix-len 10 --prefix-repetition-num-prefixes 3 --prefix-repetition-output-len 4 \
        --num-prompts 12 --concurrency 8 --rate 400 --burstiness 0.5 --samples "$tmp/pr.samples" --format json >"$tmp/pr.json"
jq -e '.bench[0] | .completed == 12 and .workload.arrivals == "gamma" and .workload.burstiness == 0.5
        and .workload.prefix.groups == 3 and .workload.input_tokens.min == 60' "$tmp/pr.json" >/dev/null \
        || fail "prefix: $(jq -c '.bench[0] | {completed, workload}' "$tmp/pr.json")"
jq -e 'all(.output_tokens == 4)' "$tmp/pr.samples" >/dev/null || fail "prefix output"
printf '%s\n' '{"prompt": "one two three", "output_tokens": 3}' '{"prompt": "four five"}' >"$tmp/c.jsonl"
"$GAUNTLET" bench --url "$ss" --dataset-name custom --dataset-path "$tmp/c.jsonl" --output-tokens 6 \
        --num-prompts 2 --concurrency 1 --samples "$tmp/c.samples" --format json >"$tmp/c.json"
jq -e '.bench[0] | .completed == 2 and .requests == 2 and .workload.prompts == 2' "$tmp/c.json" >/dev/null || fail "custom"
[ "$(jq -c '[.[].output_tokens] | sort' "$tmp/c.samples")" = "[3,6]" ] || fail "custom outputs: $(jq -c '[.[].output_tokens]' "$tmp/c.samples")"
# a prompt sent twice is said
"$GAUNTLET" bench --url "$ss" --dataset-name custom --dataset-path "$tmp/c.jsonl" --requests 3 --concurrency 1 \
        --format json >"$tmp/c3.json"
jq -e '.bench[0].warnings | any(test("prompts were sent more than once"))' "$tmp/c3.json" >/dev/null || fail "reuse warning"

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
printf '[\n{"conversations": [{"from": "human", "value": "a"}, {"value": "b"}]},\n{"conversations": [{"value": "a" "b"}]}\n]\n' >"$tmp/bad.json"
bad "gauntlet: $tmp/bad.json:3: malformed JSON" --dataset-name sharegpt --dataset-path "$tmp/bad.json"
printf '{"prompt": "a"}\n{"text": "b"}\n' >"$tmp/bad.jsonl"
bad "gauntlet: $tmp/bad.jsonl:2: no \"prompt\"" --dataset-name custom --dataset-path "$tmp/bad.jsonl"
bad "cannot read '$tmp/none.json'" --dataset-name sharegpt --dataset-path "$tmp/none.json"
bad "this dataset needs a file" --dataset-name sharegpt
bad "only the sharegpt, custom, multi_turn and trace datasets read a file" --dataset-path "$tmp/c.jsonl" --output-tokens 2
bad "invalid --dataset-name 'sharegtp'" --dataset-name sharegtp
bad "invalid --random-range-ratio '1'" --random-range-ratio 1 --output-tokens 2
bad "--burstiness needs --rate" --burstiness 2 --output-tokens 2 --requests 2
bad "needs at least as many prompts as prefixes" --dataset-name prefix_repetition --num-prompts 4
bad "give --prompt-file or a dataset, not both" --dataset-name random --prompt-file "$tmp/c.jsonl" --output-tokens 2
echo "bench-dataset: ok"

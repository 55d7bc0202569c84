#!/usr/bin/env bash
# tier: engine (tests/run engine)
# llamacpp-sharegpt.sh -- issue #25's done-when on the real llama-server (skipped, by name,
# without one): a ShareGPT-format file of 200 conversations (and two that have no reply,
# skipped and counted) runs with the prompt and output lengths the file gives, in the
# server's own tokens. Every prompt's length is what the server itself counts for that text
# as a user message (usage.prompt_tokens of a one-token answer, as the test asks it), every
# output is asked for with the reply's length by the server's /tokenize, and with ignore_eos
# the server produced exactly their sum (its usage). docs/bench.md "Workloads".
. "$SRCDIR/tests/lib.sh"
need_llama_server
command -v jq >/dev/null || fail "jq is needed"
# 4 slots of 256 cells (the testbed model's training context): prompts and replies short
# enough for one slot
python3 - "$tmp/sg.json" <<'PY'
import json, random, sys
rng = random.Random(25)
words = ["river", "stone", "light", "cloud", "seven", "garden", "quiet", "yellow", "market", "window",
         "the", "of", "and", "a", "to", "paper", "mountain", "engine", "brave", "slowly"]
conv = []
for i in range(200):
    p = " ".join(rng.choice(words) for _ in range(rng.randint(2, 14)))
    r = " ".join(rng.choice(words) for _ in range(rng.randint(2, 12)))
    conv.append({"id": str(i), "conversations": [{"from": "human", "value": p}, {"from": "gpt", "value": r}]})
conv.insert(50, {"id": "empty", "conversations": []})
conv.insert(120, {"id": "unanswered", "conversations": [{"from": "human", "value": "hello there"}]})
json.dump(conv, open(sys.argv[1], "w"))
PY
start_llama_server ls -np 4 -c 1024 -t 2
"$GAUNTLET" bench --url "$url" --engine llama.cpp --dataset-name sharegpt --dataset-path "$tmp/sg.json" \
        --num-prompts 200 --sharegpt-min-len 1 --requests 200 --warmup 0 --concurrency 8 --seed 2 \
        --samples "$tmp/s.json" --format json >"$tmp/out.json" || fail "bench failed"
w=$(jq -c '.bench[0].workload' "$tmp/out.json")
jq -e '.dataset == "sharegpt" and .entries == 202 and .prompts == 200 and .skipped.no_reply == 2
       and (.skipped.filtered // 0) == 0 and .input_tokens.as == "measured"' <<<"$w" >/dev/null || fail "workload: $w"
jq -e '.bench[0] | .completed == 200 and .failed == 0' "$tmp/out.json" >/dev/null ||
        fail "level: $(jq -c '.bench[0] | {completed, failed, first_error}' "$tmp/out.json")"
# the server's own counts of every conversation's two turns
python3 - "$url" "$tmp/sg.json" "$tmp/s.json" "$tmp/out.json" <<'PY'
import json, sys, urllib.request
url, conv, samples, out = sys.argv[1], json.load(open(sys.argv[2])), json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
def post(path, body):
    req = urllib.request.Request(url + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req, timeout=60))
want_in, want_out = [], []
for c in conv:
    t = c["conversations"]
    if len(t) < 2:
        continue
    u = post("/v1/chat/completions", {"messages": [{"role": "user", "content": t[0]["value"]}], "max_tokens": 1})
    want_in.append(u["usage"]["prompt_tokens"])
    want_out.append(len(post("/tokenize", {"content": t[1]["value"], "add_special": False})["tokens"]))
got_in = sorted(s["prompt_tokens"] for s in samples if s["ok"])
if got_in != sorted(want_in):
    sys.exit(f"FAIL: prompt lengths: got {got_in}, want {sorted(want_in)}")
lv = out["bench"][0]
uc = lv["usage_check"]
# ignore_eos: the server produced what was asked, the replies' lengths, no more, no less
if uc["requests"] != 200 or uc["usage_tokens"] != sum(want_out) or uc["above_max_tokens"] != 0:
    sys.exit(f"FAIL: output tokens: the server produced {uc}, the replies hold {sum(want_out)}")
print(f"200 conversations: prompts {min(want_in)}-{max(want_in)} tokens (sum {sum(want_in)}), "
      f"replies {min(want_out)}-{max(want_out)} (sum {sum(want_out)}); usage {uc['usage_tokens']}, "
      f"counted {uc['counted_tokens']} ({uc['method']}), disagreeing {uc['disagreeing']}")
PY
kill "$ls_pid"; wait "$ls_pid" 2>/dev/null || true
echo "llamacpp-sharegpt: all good"

#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# testbed-reference.sh -- the C testbed reproduces the PyTorch model it was trained as:
# for every tests/fixtures-testbed/reference-*.json (written by testbed/train/dump_reference.py
# from testbed/model.gguf on the training machine), the server's greedy answer and reasoning
# are the same text, and its first-step top-5 tokens and their logit gaps match.
set -euo pipefail
[ -f "$SRCDIR/testbed/model.gguf" ] || { echo "FAIL: testbed/model.gguf is missing"; exit 1; }
tmp=$(mktemp -d)
pid=
cleanup() {
        if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
        rm -rf "$tmp"
}
trap cleanup EXIT
"$TESTBED" --port 0 --moe-backend reference --gemm-backend reference >"$tmp/log" 2>&1 &
pid=$!
for _ in $(seq 200); do
        grep -q "listening on http://" "$tmp/log" && break
        kill -0 "$pid" 2>/dev/null || { cat "$tmp/log"; echo "FAIL: the testbed died"; exit 1; }
        sleep 0.05
done
url=$(grep -o "http://[0-9.]*:[0-9]*" "$tmp/log" | head -1)
[ -n "$url" ] || { cat "$tmp/log"; echo "FAIL: no listening line"; exit 1; }
python3 - "$url" "$SRCDIR"/tests/fixtures-testbed/reference-*.json <<'PY'
import json, sys, urllib.request
url, files = sys.argv[1], sys.argv[2:]
failures = 0
def post(path, body):
    req = urllib.request.Request(url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.load(r)
for f in files:
    ref = json.load(open(f))
    n = len(ref["generated_ids"]) + 2
    if ref["mode"] == "chat":
        msgs = ([{"role": "system", "content": ref["system"]}] if ref["system"] else []) + [{"role": "user", "content": ref["prompt"]}]
        out = post("/v1/chat/completions", {"messages": msgs, "temperature": 0, "max_tokens": n, "logprobs": True, "top_logprobs": 5,
                                            "chat_template_kwargs": {"enable_thinking": bool(ref["thinking"])}})
        msg = out["choices"][0]["message"]
        got = {"answer": msg.get("content") or "", "reasoning": msg.get("reasoning_content")}
        want = {"answer": ref["answer"], "reasoning": ref["reasoning"]}
        first = out["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
    else:
        out = post("/v1/completions", {"prompt": ref["prompt"], "temperature": 0, "max_tokens": len(ref["generated_ids"]), "logprobs": 5})
        got = {"answer": out["choices"][0]["text"]}
        want = {"answer": ref["generated_text"].replace("\u2581", " ")}
        tl = out["choices"][0]["logprobs"]["top_logprobs"][0]
        first = [{"token": k, "logprob": v} for k, v in sorted(tl.items(), key=lambda kv: -kv[1])]
    name = f.rsplit("/", 1)[-1]
    if got != want:
        print(f"FAIL {name}: got {got!r}, want {want!r}"); failures += 1; continue
    # first-step top-5: same tokens in the same order, and the same logit gaps (a logprob
    # gap is a logit gap) within what fp32 summation order can move
    ref5 = ref["top5_first_step"]
    toks = [t["token"].replace("\u2581", " ") for t in ref5]
    got_toks = [t["token"] for t in first[:5]]
    if got_toks[:3] != toks[:3]:
        print(f"FAIL {name}: first-step top tokens {got_toks} vs {toks}"); failures += 1; continue
    gap_ref = ref5[0]["logit"] - ref5[1]["logit"]
    gap_got = first[0]["logprob"] - first[1]["logprob"]
    if abs(gap_ref - gap_got) > 1e-2 * max(1.0, abs(gap_ref)):
        print(f"FAIL {name}: first-step logit gap {gap_got:.5f} vs {gap_ref:.5f}"); failures += 1; continue
    print(f"ok   {name}: {got['answer'][:60]!r} (gap {gap_got:.4f} vs {gap_ref:.4f})")
sys.exit(1 if failures else 0)
PY

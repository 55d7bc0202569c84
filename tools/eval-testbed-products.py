#!/usr/bin/env python3
"""eval-testbed-products.py -- asks a running gauntlet-testbed "What is A * B?" for every
pair of two-digit numbers (8,100 questions, temperature 0, thinking off) and prints how
many answers are right. A measurement for docs/testbed.md, not a test.

    build/bin/gauntlet-testbed --port 8080 --moe-backend nvfp4 --gemm-backend nvfp4 &
    python3 tools/eval-testbed-products.py http://127.0.0.1:8080 [--suffix]
"""
import json, sys, urllib.request
from concurrent.futures import ThreadPoolExecutor

url = sys.argv[1]
suffix = " Answer with just the number." if "--suffix" in sys.argv else ""

def ask(pair):
    a, b = pair
    body = {"messages": [{"role": "user", "content": f"What is {a} * {b}?{suffix}"}], "temperature": 0, "max_tokens": 8,
            "chat_template_kwargs": {"enable_thinking": False}}
    req = urllib.request.Request(url + "/v1/chat/completions", data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        got = json.load(r)["choices"][0]["message"]["content"].strip()
    return got == str(a * b), f"{a}*{b}={got}"

pairs = [(a, b) for a in range(10, 100) for b in range(10, 100)]
with ThreadPoolExecutor(4) as pool:
    results = list(pool.map(ask, pairs))
right = sum(ok for ok, _ in results)
print(f"{right}/{len(pairs)} right ({100.0 * right / len(pairs):.2f}%)")
wrong = [w for ok, w in results if not ok]
if wrong:
    print("first wrong:", ", ".join(wrong[:10]))

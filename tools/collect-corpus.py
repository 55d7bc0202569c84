#!/usr/bin/env python3
"""collect-corpus.py -- real engine outputs for the detector corpus (docs/detectors.md).

Runs the real llama-server (tools/build-llamacpp.sh) on models whose outputs are garbage by
construction and on the trained testbed model, asks each the kind of questions the checks
ask through the OpenAI chat endpoint, and writes every distinct output into

  tests/corpus/engine/{garbage,clean}/NAME.txt           the tuning part
  tests/corpus/holdout/engine/{garbage,clean}/NAME.txt   the held-back part (a third, by hash of NAME)

with NAME.reasoning (the reasoning part, when there is one) and NAME.meta (finish_reason,
kind, and the provenance: model, seed, scale, engine commit, server command, request).
Nothing is written by hand: a file's label comes from how it was made, never from its text.

  garbage  every output of a random-weight model (it cannot answer), and every output of the
           trained model when the server does not stop at the end of its turn (ignore_eos:
           what a wrong end-of-turn token id does); HTTP errors are counted, not stored;
  clean    outputs of the trained testbed model that are exactly its right answer
           (wrong answers are the golden check's business, not the detectors': dropped).

The kind of a garbage output (for the figures per kind) is read from its text
and token ids by kind_of() below; it groups, it does not decide.

The plan `stop-*` (run alone with `--only stop-`) asks collapsed random models for short
answers that the model itself ends: its end token is raised by logit_bias to just under the
bias at which it wins the first token, and sampling at temperature 1 then ends the run of
one token at a random step (docs/detectors.md, "Short loops").

  tools/collect-corpus.py [--out tests/corpus] [--only SUBSTRING] [--list]

Standard library only; about twelve minutes on two cores (5,223 requests). The files of a
previous run under engine/ are replaced (their names, and so the held-back split, are stable);
nothing else in tests/corpus is touched. Run `make corpus-figures CORPUS_FIGURES_ARGS=--mark-misses`
afterwards (docs/detectors.md).
"""

import argparse
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unicodedata
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VOCAB = os.path.join(HERE, "corpus-vocab.json")
FALLBACK = "I can multiply numbers, repeat words and count."

# ---- what is asked ---------------------------------------------------------------------


# Samplers: llama-server's defaults (top-k 40, top-p 0.95, min-p 0.05), and the plain one
# that vLLM and SGLang use by default (no top-k, top-p 1, no min-p): with it, logits that all
# tie or are NaN give the first or last token id, as an argmax does.
PLAIN = {"top_k": 0, "top_p": 1.0, "min_p": 0.0}


def req(rid, prompt, thinking=False, temperature=0.0, max_tokens=256, ignore_eos=False, expect=None,
        reasoning=None, sampler=None, seed=1, eos_below=None):
    messages = prompt if isinstance(prompt, list) else [{"role": "user", "content": prompt}]
    return {"id": rid, "messages": messages, "thinking": thinking, "temperature": temperature,
            "max_tokens": max_tokens, "ignore_eos": ignore_eos, "expect": expect, "reasoning": reasoning,
            "sampler": sampler or {}, "seed": seed, "eos_below": eos_below, "logit_bias": None}


def mul_trace(a, b):
    if b < 10:
        return "%d * %d = %d" % (a, b, a * b)
    t, u = b // 10 * 10, b % 10
    return "%d * %d = %d * %d + %d * %d = %d + %d = %d" % (a, b, a, t, a, u, a * t, a * u, a * b)


def testbed_questions():
    """The testbed model's skills (docs/testbed-model.md), each with its right answer."""
    r = random.Random(14)
    qs = []
    phrasings = ["What is {a} * {b}?", "What is {a} x {b}?", "What is {a} \u00d7 {b}?", "Compute {a} * {b}.",
                 "What is {a} * {b}? Answer with just the number.", "{a} * {b} = ?", "What is {a} times {b}?"]
    pairs = [(17, 19), (99, 99), (7, 8)] + [(r.randint(10, 99), r.randint(10, 99)) for _ in range(13)] + \
        [(r.randint(10, 99), r.randint(2, 9)) for _ in range(4)]
    for i, (a, b) in enumerate(pairs):
        think = i % 3 == 1
        qs.append(("mul-%d-%d%s" % (a, b, "-think" if think else ""), phrasings[i % len(phrasings)].format(a=a, b=b),
                   think, str(a * b), mul_trace(a, b) if think else None))
    for i, p in enumerate(["Reply with exactly: OK", "Say OK.", "Respond with just OK", "Reply with the word OK.",
                           "Please reply with exactly: OK", "Answer with OK."]):
        qs.append(("ok-%d" % i, p, i == 2, "OK", None))
    for w, n in [("ha", 3), ("ha", 5), ("hello", 7), ("yes", 5), ("no", 4), ("la", 10), ("na", 8), ("ho", 3),
                 ("beep", 6), ("test", 12), ("hey", 2), ("ping", 9), ("meow", 11), ("tick", 4)]:
        qs.append(("repeat-%s-%d" % (w, n), "Repeat the word %s %d times." % (w, n), n == 6, " ".join([w] * n), None))
    for n in [3, 5, 10, 16, 20, 30]:
        qs.append(("count-%d" % n, "Count to %d." % n, n == 10, " ".join(str(i) for i in range(1, n + 1)), None))
    for i, p in enumerate(["Hello!", "Tell me a joke.", "What is 2 + 2?", "Write a haiku about the sea.",
                           "Translate hello to French.", "\u00bfQu\u00e9 hora es?",
                           "\u4f60\u597d\uff0c\u4f60\u662f\u8c01\uff1f",
                           "\u041f\u0440\u0438\u0432\u0435\u0442, \u043a\u0430\u043a \u0434\u0435\u043b\u0430?"]):
        qs.append(("fallback-%d" % i, p, i == 3, FALLBACK, None))
    return qs


def testbed_requests():
    out = []
    for rid, p, think, expect, trace in testbed_questions():
        for t in (0.0, 0.8):
            out.append(req("%s-t%g" % (rid, t), p, think, t, 200, expect=expect, reasoning=trace))
    return out


def testbed_run_on_requests():
    """The trained model when the server does not stop at its end-of-turn token."""
    keep = {"ok-0", "ok-2", "mul-17-19", "mul-99-99-think", "mul-7-8", "repeat-ha-3", "repeat-hello-7",
            "repeat-test-12", "count-5", "count-20", "fallback-0", "fallback-3", "fallback-6"}
    out = []
    for rid, p, think, _, _ in testbed_questions():
        if rid not in keep:
            continue
        for t, m in ((0.0, 64), (0.0, 200), (0.8, 200)):
            out.append(req("%s-eos-t%g-m%d" % (rid, t, m), p, think, t, m, ignore_eos=True))
    return out


def random_prompts():
    two_turns = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "Hi"},
                 {"role": "assistant", "content": "Hello! How can I help?"},
                 {"role": "user", "content": "What is 17 * 19?"}]
    return [("ok", "Reply with exactly: OK", False), ("mul", "What is 17 * 19?", False),
            ("mul-think", "What is 17 * 19?", True), ("fr", "\u00c9cris une phrase sur la mer.", False),
            ("zh", "\u7528\u4e00\u53e5\u8bdd\u4ecb\u7ecd\u4f60\u81ea\u5df1\u3002", False),
            ("turns", two_turns, False)]


def random_requests():
    prompts = random_prompts()
    # max_tokens from the smoke suite's 256 down to a handful: a check may ask for few tokens,
    # and the first tokens of a flood are what a short answer shows
    settings = [("", None, 0.0, 256), ("", None, 0.0, 16), ("", None, 0.0, 8), ("", None, 0.0, 4),
                ("", None, 0.8, 64), ("plain-", PLAIN, 0.0, 256), ("plain-", PLAIN, 0.0, 16),
                ("plain-", PLAIN, 0.0, 4), ("plain-", PLAIN, 0.8, 64)]
    out = []
    for pid, p, think in prompts:
        for tag, sampler, t, m in settings:
            out.append(req("%s-%st%g-m%d" % (pid, tag, t, m), p, think, t, m, sampler=sampler))
    return out


# The end token of tools/corpus-model.py's vocabulary (</s>, id 2): llama-server ends a
# completion there. A model collapsed into runs of one token never picks it: raised by
# logit_bias to STOP_BELOW under the bias at which it wins the first token at temperature 0
# (found per prompt, eos_threshold below), and sampled at temperature 1 with the plain
# sampler, it ends the run at a random step, a few tokens to a few dozen in: the shape of a
# broken kernel that repeats its last token a handful of times and stops. What comes out is
# garbage by construction; which outputs are kept does not depend on their text.
EOS_ID = 2
STOP_BELOW = (0.5, 1.0, 2.0)
STOP_SEEDS = (1, 2, 3, 4)
STOP_MAX_TOKENS = 40


def stop_requests():
    out = []
    for pid, p, think in random_prompts():
        if pid == "zh":
            continue  # llama-server refuses it with this vocabulary (HTTP 400, "unordered_map::at")
        for d in STOP_BELOW:
            for seed in STOP_SEEDS:
                out.append(req("%s-below%g-r%d" % (pid, d, seed), p, think, 1.0, STOP_MAX_TOKENS, sampler=PLAIN,
                               seed=seed, eos_below=d))
    return out


# ---- the models ------------------------------------------------------------------------


def model_plan(work, testbed_bin):
    """(id, file, command that makes it or None, description, requests, server flag sets)."""
    plan = []
    cm = [sys.executable, os.path.join(HERE, "corpus-model.py"), "model", "--vocab", VOCAB]
    rnd = random_requests()
    flags = ([], ["--special"])
    for seed in (1,):
        for scale in (0.1, 1.0):
            mid = "mult-s%d-x%g" % (seed, scale)
            args = ["--seed", str(seed), "--scale", str(scale)]
            plan.append((mid, cm + args, "random multilingual model, output not tied", rnd, flags))
    # Tied output collapses into runs of one token at small block weights (the residual
    # stream is the last token's embedding, whose own row wins), into soup at larger ones.
    tied = [(seed, scale) for seed in range(1, 13) for scale in (0.15, 0.2, 0.25)]
    tied += [(seed, 0.3) for seed in (1, 2, 3)] + [(seed, 0.1) for seed in (1, 2)]
    for seed, scale in tied:
        mid = "tied-s%d-x%g" % (seed, scale)
        args = ["--seed", str(seed), "--scale", str(scale), "--tied"]
        plan.append((mid, cm + args, "random multilingual model, output tied to the embedding", rnd, flags))
    # Short answers the model ends itself: collapsed tied models (runs of one token, and a
    # switch to another token now and then) with their end token raised (stop_requests).
    for seed in range(1, 11):
        mid = "stop-tied-s%d-x0.2" % seed
        args = ["--seed", str(seed), "--scale", "0.2", "--tied"]
        plan.append((mid, cm + args, "random multilingual model, output tied to the embedding, end token raised "
                     "(logit_bias) to stop it", stop_requests(), ([],)))
    plan.append(("zero", cm + ["--seed", "1", "--scale", "0.5", "--output-scale", "0"],
                 "random multilingual model, output projection zero (every logit ties)", rnd, flags))
    plan.append(("nan", cm + ["--seed", "1", "--scale", "0.5", "--nan"],
                 "random multilingual model, output projection NaN", rnd, flags))
    for seed, scale in ((1, 0.08), (2, 0.08), (1, 0.5), (1, 0)):
        mid = "tbrand-s%d-x%g" % (seed, scale)
        plan.append((mid, [testbed_bin, "--random-seed", str(seed), "--random-scale", str(scale)],
                     "the testbed's random-weight model (gauntlet-testbed --write-random-model)", rnd, ([],)))
    plan.append(("testbed", None, "the trained testbed model (testbed/model.gguf)", testbed_requests(), ([],)))
    plan.append(("testbed-eos", None, "the trained testbed model, server not stopping at the end of turn",
                 testbed_run_on_requests(), ([],)))
    out = []
    for mid, cmd, desc, reqs, fl in plan:
        path = os.path.join(work, mid + ".gguf")
        if cmd is None:
            path, make, recipe = os.path.join(ROOT, "testbed", "model.gguf"), None, "testbed/model.gguf"
        elif cmd[0] == testbed_bin:
            make = [testbed_bin, "--write-random-model", path] + cmd[1:]
            recipe = "gauntlet-testbed --write-random-model MODEL.gguf " + " ".join(cmd[1:])
        else:
            make = cmd + [path]
            recipe = "tools/corpus-model.py model --vocab tools/corpus-vocab.json %s MODEL.gguf" % " ".join(cmd[5:])
        out.append({"id": mid, "file": path, "make": make, "recipe": recipe, "desc": desc, "requests": reqs,
                    "flags": fl})
    return out


# ---- the engine ------------------------------------------------------------------------


class Server:
    def __init__(self, binary, model, flags, log):
        self.cmd = [binary, "-m", model, "--host", "127.0.0.1", "--port", "0", "-t", "1"] + flags
        self.log = log
        self.proc = None
        self.url = None

    def __enter__(self):
        self.logf = open(self.log, "wb")
        self.proc = subprocess.Popen(self.cmd, stdout=self.logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("llama-server exited with %s (log %s)" % (self.proc.returncode, self.log))
            with open(self.log, "rb") as f:
                m = re.search(rb"listening on (http://127\.0\.0\.1:\d+)", f.read())
            if m:
                self.url = m.group(1).decode()
                try:
                    with urllib.request.urlopen(self.url + "/health", timeout=5) as r:
                        if r.status == 200:
                            return self
                except (urllib.error.URLError, OSError):
                    pass
            time.sleep(0.1)
        raise RuntimeError("llama-server did not come up (log %s)" % self.log)

    def __exit__(self, *exc):
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.logf.close()

    def chat(self, r):
        body = {"messages": r["messages"], "max_tokens": r["max_tokens"], "temperature": r["temperature"],
                "seed": r.get("seed", 1), "logprobs": True, "chat_template_kwargs": {"enable_thinking": r["thinking"]}}
        body.update(r["sampler"])
        if r["ignore_eos"]:
            body["ignore_eos"] = True
        if r.get("logit_bias"):
            body["logit_bias"] = r["logit_bias"]
        data = json.dumps(body, ensure_ascii=False).encode()
        rq = urllib.request.Request(self.url + "/v1/chat/completions", data=data,
                                    headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(rq, timeout=120) as resp:
                return 200, json.load(resp), body
        except urllib.error.HTTPError as e:
            return e.code, {"error": e.read().decode("utf-8", "replace")[:300]}, body


def eos_threshold(srv, r):
    """The smallest logit_bias on the end token (to 1/32) at which the greedy first token is
    the end: the model's margin against it at the start of the answer. Returns (bias, the
    requests it took)."""
    lo, hi, n = 0.0, 64.0, 0
    probe = dict(r, max_tokens=1, temperature=0.0, sampler={}, seed=1, eos_below=None)
    while hi - lo > 1 / 32:
        mid = (lo + hi) / 2
        probe["logit_bias"] = [[EOS_ID, mid]]
        status, resp, _ = srv.chat(probe)
        n += 1
        stopped = status == 200 and (resp.get("choices") or [{}])[0].get("finish_reason") == "stop"
        if stopped:
            hi = mid
        else:
            lo = mid
    return hi, n


# ---- kinds -----------------------------------------------------------------------------


def script_of(c):
    try:
        s = unicodedata.name(c).split()[0]
    except ValueError:
        return None
    return "CJK" if s in ("CJK", "HIRAGANA", "KATAKANA") else s


def longest_run(units):
    """(length, start) of the longest run of one unit in a list."""
    best, start, i = (0, 0), 0, 0
    while i < len(units):
        j = i
        while j < len(units) and units[j] == units[i]:
            j += 1
        if j - i > best[0]:
            best = (j - i, i)
        i = j
    return best


def tail_cycle(units):
    """Repeats of the shortest cycle of 2..8 units at the end (0 if under 4)."""
    for p in range(2, 9):
        k = 0
        while k + p < len(units) and units[-1 - k] == units[-1 - k - p]:
            k += 1
        if (k + p) // p >= 4 and len(set(units[-p:])) > 1:
            return (k + p) // p
    return 0


def kind_of(text, reasoning, specials, ids):
    """The shape of a garbage output, in the issue's words (docs/detectors.md "The engine
    corpus"), from its text and its token ids: it groups the figures, it decides nothing."""
    s = (text if text.strip() else (reasoning or "")).strip()
    if not s:
        return "blank"
    if any(sp and sp * 3 in s for sp in specials):
        return "special-repeat"
    words = s.split()
    if 3 <= len(words) <= 16 and len(set(words)) == 1 and any(c.isalnum() for c in words[0]):
        return "word-repeat"
    # runs of one token (the engine's tokens; words for a character-level model)
    for units in (ids, words):
        n, at = longest_run(units)
        if n < 8:
            continue
        if at + n >= len(units) - 1 and at >= 2 and n < 0.9 * len(units):
            return "tail-run"
        if n >= 0.5 * len(units):
            return "run"
    if tail_cycle(ids) or tail_cycle(words):
        return "loop"
    scripts = {script_of(c) for c in s if c.isalpha()} - {None}
    if len(scripts) >= 3 and sum(c.isalpha() for c in s) >= 8:
        return "script-soup"
    return "other"


# ---- writing ---------------------------------------------------------------------------


def holdout(name):
    return int(hashlib.sha256(name.encode()).hexdigest()[:8], 16) % 3 == 0


def engine_id(binary):
    """The snapshot the binary was built from: its cache folder is named after the archive."""
    m = re.search(r"llama\.cpp-(\d{4}-\d{2}-\d{2})-([0-9a-f]{7,})", os.path.realpath(binary))
    return "llama.cpp %s (snapshot %s)" % (m.group(2), m.group(1)) if m else "llama.cpp (unknown commit)"


def main():
    ap = argparse.ArgumentParser(description="real engine outputs for tests/corpus")
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "corpus"))
    ap.add_argument("--llama-server", default=os.environ.get("LLAMA_SERVER"))
    ap.add_argument("--testbed", default=os.path.join(ROOT, "build", "bin", "gauntlet-testbed"))
    ap.add_argument("--only", help="only models whose id contains this (the rest of engine/ is kept)")
    ap.add_argument("--list", action="store_true", help="print the plan and exit")
    a = ap.parse_args()
    binary = a.llama_server
    if not binary:
        p = subprocess.run([os.path.join(HERE, "build-llamacpp.sh"), "--path"], capture_output=True, text=True)
        binary = p.stdout.strip()
    if not binary or not os.access(binary, os.X_OK):
        print("collect-corpus: no llama-server (set LLAMA_SERVER or run tools/build-llamacpp.sh)", file=sys.stderr)
        return 2
    if not os.access(a.testbed, os.X_OK):
        print("collect-corpus: no gauntlet-testbed at '%s' (run make)" % a.testbed, file=sys.stderr)
        return 2
    with open(VOCAB, encoding="utf-8") as f:
        vocab = json.load(f)["tokens"]
    work = tempfile.mkdtemp(prefix="collect-corpus.")
    plan = model_plan(work, a.testbed)
    if a.only:
        plan = [m for m in plan if a.only in m["id"]]
    if a.list:
        shutil.rmtree(work)
        for m in plan:
            print(m["id"], len(m["requests"]) * len(m["flags"]), "requests", " ".join(m["make"] or [m["file"]]))
        return 0
    engine = engine_id(binary)
    dirs = {(h, lab): os.path.join(a.out, "holdout", "engine", lab) if h else os.path.join(a.out, "engine", lab)
            for h in (False, True) for lab in ("garbage", "clean")}
    for d in dirs.values():
        if not a.only and os.path.isdir(d):
            shutil.rmtree(d)
        os.makedirs(d, exist_ok=True)
    seen = set()
    stats = {"requests": 0, "http_errors": 0, "duplicates": 0, "wrong_dropped": 0, "written": 0,
             "threshold_requests": 0}
    try:
        for m in plan:
            if m["make"]:
                subprocess.run(m["make"], check=True, stdout=subprocess.DEVNULL)
            for flags in m["flags"]:
                tag = m["id"] + ("-sp" if flags else "")
                # the special tokens' text as the server prints it: control and unknown tokens
                # only with --special, user-defined ones (<think>) always
                if m["make"] and m["make"][0] == sys.executable:
                    specials = [t for t, typ in vocab if typ == 4 or (flags and typ in (2, 3))]
                else:
                    specials = ["<think>", "</think>"] + (["<unk>", "<s>", "</s>", "<|user|>", "<|assistant|>",
                                                           "<|end|>"] if flags else [])
                with Server(binary, m["file"], flags, os.path.join(work, tag + ".log")) as srv:
                    thresholds = {}
                    for r in m["requests"]:
                        if r["eos_below"] is not None:
                            key = json.dumps([r["messages"], r["thinking"]])
                            if key not in thresholds:
                                thresholds[key], n = eos_threshold(srv, r)
                                stats["threshold_requests"] += n
                            r = dict(r, logit_bias=[[EOS_ID, round(thresholds[key] - r["eos_below"], 4)]])
                        stats["requests"] += 1
                        status, resp, body = srv.chat(r)
                        if status != 200 or "choices" not in resp:
                            stats["http_errors"] += 1
                            continue
                        c = resp["choices"][0]
                        msg = c.get("message") or {}
                        text = msg.get("content") or ""
                        why = msg.get("reasoning_content") or ""
                        finish = c.get("finish_reason") or ""
                        ids = [t.get("id") for t in ((c.get("logprobs") or {}).get("content") or [])]
                        garbage = m["id"] != "testbed"
                        if not garbage and text != r["expect"]:
                            stats["wrong_dropped"] += 1
                            continue
                        key = (garbage, text, why, finish == "length")
                        if key in seen:
                            stats["duplicates"] += 1
                            continue
                        seen.add(key)
                        name = "%s-%s" % (tag, r["id"])
                        d = dirs[(holdout(name), "garbage" if garbage else "clean")]
                        kind = kind_of(text, why, specials, ids) if garbage else "testbed-answer"
                        if r["eos_below"] is not None:
                            kind = "stopped-" + kind
                        with open(os.path.join(d, name + ".txt"), "w", encoding="utf-8", newline="") as f:
                            f.write(text)
                        if why:
                            with open(os.path.join(d, name + ".reasoning"), "w", encoding="utf-8", newline="") as f:
                                f.write(why)
                        shown = dict(body)
                        with open(os.path.join(d, name + ".meta"), "w", encoding="utf-8") as f:
                            f.write("finish_reason=%s\n" % finish)
                            usage = resp.get("usage") or {}
                            if isinstance(usage.get("completion_tokens"), int):
                                f.write("completion_tokens=%d\n" % usage["completion_tokens"])
                            f.write("kind=%s\n" % kind)
                            f.write("label=%s (%s)\n" % ("garbage" if garbage else "clean",
                                                         "by construction" if garbage else "the right answer"))
                            f.write("model=%s: %s\n" % (m["desc"], m["recipe"]))
                            f.write("engine=%s\n" % engine)
                            f.write("server=llama-server -m MODEL.gguf --host 127.0.0.1 --port 0 -t 1%s\n" %
                                    ("".join(" " + x for x in flags)))
                            f.write("request=POST /v1/chat/completions %s\n" % json.dumps(shown, ensure_ascii=False))
                            if r["eos_below"] is not None:
                                f.write("end_token_bias=%g: %g under %g, the bias at which the end token (id %d) "
                                        "wins the first token at temperature 0\n" %
                                        (r["logit_bias"][0][1], r["eos_below"], r["logit_bias"][0][1] + r["eos_below"],
                                         EOS_ID))
                            f.write("tokens=%d\n" % len(ids))
                            f.write("collected_by=tools/collect-corpus.py\n")
                        stats["written"] += 1
                print("%-22s %s" % (tag, stats), file=sys.stderr)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if not a.only:
        with open(os.path.join(a.out, "engine", "MANIFEST"), "w", encoding="utf-8") as f:
            f.write("collected by tools/collect-corpus.py with %s (%s)\n" % (engine, os.path.basename(binary)))
            for k, v in stats.items():
                f.write("%s=%d\n" % (k, v))
    print("collect-corpus: %s" % stats, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

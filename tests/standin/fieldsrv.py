#!/usr/bin/env python3
"""fieldsrv.py -- a stand-in OpenAI-compatible server whose backends fail the way backends
failed in public reports (shared/ENGINES.md, "Failures only some requests see"), written
apart from the testbed so that gauntlet's probes are checked against a server whose author
did not write them.

Its "model" answers by rule, with words as tokens:
  - "What is A * B?" (also x and ×) -> the product;
  - "Reply with exactly: W" -> W;
  - a pass key ("The pass key is N" / "The passkey is N") or a number to remember
    ("Remember this number: N") anywhere in the conversation, asked for in the last user
    message ("What is the pass key?", "What number did I ask you to remember?") -> N;
  - anything else -> a fixed sentence; with ignore_eos (a bench), plain English words until
    max_tokens.
Thinking on (chat_template_kwargs.enable_thinking or thinking) adds a reasoning part.

--backend says how it breaks (every fault only in its condition, nothing in the log):
  honest     never
  long       a context (prompt words) over --long-threshold: every token is "+"
  sampling   temperature > 0: mixed-script word salad
  turns      three user turns or more: "...a S componentes_obs Worce!!!!!!!!"
  load       8 or more generations at once: coherent wrong numbers (product + 10)
  bench      a prompt over 200 words: every token is "!" (short questions stay right)

--token-delay-ms sets its speed (milliseconds per token); usage counts exactly what it sent.
How it streams and counts (issue #32's counting attacks; any backend):
  --tokens-per-chunk N   N tokens in each SSE chunk, as SGLang's --stream-interval N sends them
  --chunk-chars          every character of a token in its own SSE chunk
  --tokenize-scale K     POST /tokenize counts K tokens per word (1: the truth)
"""
import argparse
import json
import random
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

WORDS = ("the river runs past an old mill where a miller keeps records of grain and weather "
         "in a ledger that his daughter reads aloud each evening to neighbours who gather by "
         "the fire to hear about harvests storms and travellers from distant towns").split()
SALAD = ["MethodInfo", "yageegebensatunya", "amatööri", "componentes_obs", "Приветствие",
         "的时候", "ニュース", "ąęśćż", "Worce", "λόγος", "정말로", "ſtraße", "Ðiều"]
FALLBACK = "I can multiply numbers, repeat what you ask and remember a pass key."

lock = threading.Lock()
in_flight = 0


def words(text):
    return re.findall(r"\S+\s*", text)


def conversation(body, chat):
    if not chat:
        return [{"role": "user", "content": str(body.get("prompt", ""))}]
    out = []
    for m in body.get("messages") or []:
        c = m.get("content")
        if isinstance(c, list):
            c = " ".join(p.get("text", "") for p in c if isinstance(p, dict))
        out.append({"role": m.get("role", "user"), "content": c or ""})
    return out


def answer(msgs):
    users = [m["content"] for m in msgs if m["role"] == "user"]
    last = users[-1] if users else ""
    alltext = " ".join(m["content"] for m in msgs)
    if re.search(r"what (is|was) the pass ?key", last, re.I):
        m = re.search(r"pass ?key is (\w+)", alltext, re.I)
        return m.group(1) if m else "I do not know the pass key."
    if re.search(r"what (number|word|value) did i ask you to remember", last, re.I):
        m = re.search(r"remember (?:this|the) (?:number|word|value):? *(\w+)", alltext, re.I)
        return m.group(1) if m else "You did not ask me to remember anything."
    m = re.search(r"(\d+)\s*(?:\*|x|×)\s*(\d+)", last)
    if m:
        return str(int(m.group(1)) * int(m.group(2)))
    m = re.search(r"reply with exactly:?\s*(\S+?)[.!]?\s*$", last, re.I)
    if m:
        return m.group(1)
    return FALLBACK


def generate(args, body, chat):
    """The tokens to send (answer, reasoning), the finish reason and the prompt's size."""
    msgs = conversation(body, chat)
    prompt_tokens = sum(len(words(m["content"])) for m in msgs) + 2 * len(msgs)
    max_tokens = int(body.get("max_tokens") or body.get("max_completion_tokens") or 256)
    ignore_eos = bool(body.get("ignore_eos")) or int(body.get("min_tokens") or 0) >= max_tokens
    temperature = float(body.get("temperature", 1.0) if body.get("temperature") is not None else 1.0)
    kw = body.get("chat_template_kwargs") or {}
    thinking = chat and bool(kw.get("enable_thinking", kw.get("thinking", False)))
    if prompt_tokens > args.context:
        return None, "prompt (%d tokens) exceeds the context (%d tokens)" % (prompt_tokens, args.context)
    users = [m for m in msgs if m["role"] == "user"]
    text = answer(msgs)
    b = args.backend
    rng = random.Random(int(body.get("seed") or 0) + prompt_tokens)
    if b == "long" and prompt_tokens > args.long_threshold:
        return (["+"] * max_tokens, [], "length", prompt_tokens), None
    if b == "bench" and prompt_tokens > 200:
        return (["!"] * max_tokens, [], "length", prompt_tokens), None
    if b == "sampling" and temperature > 0:
        toks = ["".join(rng.choice(SALAD) for _ in range(rng.randint(1, 3))) + " " for _ in range(max_tokens)]
        return (toks, [], "length", prompt_tokens), None
    if b == "turns" and len(users) >= 3:
        toks = ["...a ", "S ", "componentes_obs ", "Worce"] + ["!"] * max(0, max_tokens - 4)
        return (toks[:max_tokens], [], "length", prompt_tokens), None
    if b == "load" and in_flight >= 8:
        text = re.sub(r"\d+", lambda m: str(int(m.group(0)) + 10), text)
    toks = words(text)
    if ignore_eos:
        i = rng.randrange(len(WORDS))
        while len(toks) < max_tokens:
            toks.append(" " + WORDS[i % len(WORDS)] if toks else WORDS[i % len(WORDS)])
            i += 1
    reasoning = words("Let me work this out before I answer. ") if thinking else []
    finish = "stop"
    if len(reasoning) + len(toks) > max_tokens:
        toks = (reasoning + toks)[:max_tokens][len(reasoning):] if len(reasoning) < max_tokens else []
        reasoning = reasoning[:max_tokens]
        finish = "length"
    elif ignore_eos:
        finish = "length"
    return (toks, reasoning, finish, prompt_tokens), None


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        pass

    def send_json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path == "/health":
            self.send_json(200, {"status": "ok"})
        elif self.path == "/v1/models":
            self.send_json(200, {"object": "list", "data": [
                {"id": "standin", "object": "model", "owned_by": "fieldsrv", "max_model_len": self.server.args.context}]})
        else:
            self.send_json(404, {"error": {"message": "not found", "type": "not_found", "code": 404}})

    def do_POST(self):
        global in_flight
        n = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            self.send_json(400, {"error": {"message": "invalid JSON", "type": "invalid_request_error", "code": 400}})
            return
        if self.path == "/tokenize":
            text = str(body.get("content", body.get("prompt", "")))
            n = int(round(len(words(text)) * self.server.args.tokenize_scale))
            self.send_json(200, {"tokens": list(range(n)), "count": n})
            return
        chat = self.path == "/v1/chat/completions"
        if not chat and self.path != "/v1/completions":
            self.send_json(404, {"error": {"message": "not found", "type": "not_found", "code": 404}})
            return
        with lock:
            in_flight += 1
        try:
            self.serve(body, chat)
        finally:
            with lock:
                in_flight -= 1

    def serve(self, body, chat):
        args = self.server.args
        out, err = generate(args, body, chat)
        if err:
            self.send_json(400, {"error": {"message": err, "type": "invalid_request_error", "code": 400}})
            return
        toks, reasoning, finish, prompt_tokens = out
        delay = args.token_delay_ms / 1000.0
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": len(toks) + len(reasoning),
                 "total_tokens": prompt_tokens + len(toks) + len(reasoning)}
        rid = "cmpl-%d" % random.randrange(1 << 30)
        if not body.get("stream"):
            time.sleep(delay * (len(toks) + len(reasoning)))
            text = "".join(toks)
            if chat:
                msg = {"role": "assistant", "content": text}
                if reasoning:
                    msg["reasoning_content"] = "".join(reasoning)
                choice = {"index": 0, "message": msg, "finish_reason": finish}
            else:
                choice = {"index": 0, "text": text, "finish_reason": finish}
            self.send_json(200, {"id": rid, "object": "chat.completion" if chat else "text_completion",
                                 "model": "standin", "choices": [choice], "usage": usage})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

        def event(choice):
            obj = {"id": rid, "object": "chat.completion.chunk" if chat else "text_completion",
                   "model": "standin", "choices": [choice] if choice is not None else []}
            if choice is None:
                obj["usage"] = usage
            self.wfile.write(b"data: " + json.dumps(obj).encode() + b"\n\n")
            self.wfile.flush()

        def pieces(part):
            """(text, tokens it carries) per chunk, as --tokens-per-chunk and --chunk-chars say."""
            if args.chunk_chars:
                return [(c, 1.0 / len(t)) for t in part for c in t]
            n = max(1, args.tokens_per_chunk)
            return [("".join(part[i:i + n]), len(part[i:i + n])) for i in range(0, len(part), n)]

        try:
            for part, field in ((reasoning, "reasoning_content"), (toks, "content")):
                for t, carried in pieces(part):
                    time.sleep(delay * carried)
                    event({"index": 0, "delta": {field: t}, "finish_reason": None} if chat
                          else {"index": 0, "text": t, "finish_reason": None})
            event({"index": 0, "delta": {}, "finish_reason": finish} if chat
                  else {"index": 0, "text": "", "finish_reason": finish})
            if (body.get("stream_options") or {}).get("include_usage"):
                event(None)
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass


def main():
    p = argparse.ArgumentParser(description="a stand-in server whose backends fail as field reports did")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--backend", choices=["honest", "long", "sampling", "turns", "load", "bench"], default="honest")
    p.add_argument("--context", type=int, default=8192, help="context in tokens (words), said in /v1/models")
    p.add_argument("--long-threshold", type=int, default=2000)
    p.add_argument("--token-delay-ms", type=float, default=1.0)
    p.add_argument("--tokens-per-chunk", type=int, default=1)
    p.add_argument("--chunk-chars", action="store_true")
    p.add_argument("--tokenize-scale", type=float, default=1.0)
    args = p.parse_args()
    srv = ThreadingHTTPServer((args.host, args.port), Handler)
    srv.daemon_threads = True
    srv.args = args
    print("fieldsrv: backend %s listening on http://%s:%d" % (args.backend, args.host, srv.server_address[1]), flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())

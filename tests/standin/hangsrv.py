#!/usr/bin/env python3
"""hangsrv.py -- a stand-in OpenAI-compatible server that hangs while still sending something,
for bench-ping-hang.sh (docs/metrics.md "Failures decide").

Its first --answer-first completion requests are answered at once ("Reply with exactly: W" ->
W, else "OK"), so that a sweep's checks pass. Every later one hangs, by --mode:
  ping     a stream that never carries a token: a role-only chunk, a chunk with an empty
           content delta, a usage-only chunk, then an SSE comment ": ping" every --interval
           seconds, forever
  trickle  a stream of one word every --interval seconds, forever: tokens, too slowly to end

--port-file FILE gets the port it listens on (127.0.0.1, a free one).
"""
import argparse
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

args = None
lock = threading.Lock()
served = 0


def chunk(delta, finish=None, usage=None):
    o = {"id": "c", "object": "chat.completion.chunk", "model": "hang",
         "choices": [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage is not None:
        o["usage"] = usage
    return "data: " + json.dumps(o) + "\n\n"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def reply(self, code, body, ctype="application/json"):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        if self.path.startswith("/health"):
            self.reply(200, "{}")
        elif self.path.startswith("/v1/models"):
            self.reply(200, json.dumps({"object": "list", "data": [{"id": "hang", "object": "model"}]}))
        else:
            self.reply(404, "{}")

    def do_POST(self):
        global served
        n = int(self.headers.get("Content-Length") or 0)
        try:
            req = json.loads(self.rfile.read(n) or b"{}")
        except ValueError:
            return self.reply(400, "{}")
        if not self.path.startswith("/v1/"):
            return self.reply(404, "{}")
        chat = "chat" in self.path
        with lock:
            served += 1
            mine = served
        stream = bool(req.get("stream"))
        if mine <= args.answer_first:
            text = json.dumps(req.get("messages") or req.get("prompt"))
            m = re.search(r"Reply with exactly: (\w+)", text)
            word = m.group(1) if m else "OK"
            if not stream:
                msg = {"message": {"role": "assistant", "content": word}} if chat else {"text": word}
                return self.reply(200, json.dumps({"id": "c", "object": "x", "model": "hang",
                                                   "choices": [dict(index=0, finish_reason="stop", **msg)],
                                                   "usage": {"prompt_tokens": 1, "completion_tokens": 1,
                                                             "total_tokens": 2}}))
            self.start_stream()
            self.send(chunk({"role": "assistant", "content": word} if chat else {"content": word}))
            self.send(chunk({}, "stop", {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}))
            self.send("data: [DONE]\n\n")
            return self.end_stream()
        self.start_stream()
        try:
            if args.mode == "ping":
                self.send(chunk({"role": "assistant"}))
                self.send(chunk({"content": ""}))
                self.send(chunk(None, usage={"prompt_tokens": 1, "completion_tokens": 0, "total_tokens": 1}))
                while True:
                    time.sleep(args.interval)
                    self.send(": ping\n\n")
            else:
                i = 0
                while True:
                    time.sleep(args.interval)
                    self.send(chunk({"content": "word%d " % i}))
                    i += 1
        except (BrokenPipeError, ConnectionResetError):
            pass

    def start_stream(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def send(self, s):
        data = s.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_stream(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def main():
    global args
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["ping", "trickle"], required=True)
    p.add_argument("--interval", type=float, default=1.0)
    p.add_argument("--answer-first", type=int, default=0)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file")
    args = p.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    srv.daemon_threads = True
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(str(srv.server_address[1]))
        import os
        os.rename(args.port_file + ".tmp", args.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    main()

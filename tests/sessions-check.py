#!/usr/bin/env python3
"""sessions-check.py -- a multi_turn bench checked against gauntlet-schedsrv's request log
(--log-requests, with --tag-content: request n streams the chunks " rNtI"), for
tests/integration/bench-sessions.sh and bench-threads.sh:

  - each body is user, assistant, user, ...: its assistant messages are the answers the
    server streamed to the earlier turns of the same conversation;
  - each turn after the first was sent THINK ms (up to +60) after its previous turn ended;
  - SESSIONS conversations of TURNS requests each;
  - the conversations open at once: exactly OPEN, or at most OPEN with --at-most;
  - with --loops L (L > 1): each conversation on one loop (request id N-M: loop M % L), and
    every loop used.

  sessions-check.py LOG --think MS --sessions S --turns K --open N [--at-most] [--loops L]
Exits 1 with what was wrong, one line each.
"""
import argparse
import json
import sys

ap = argparse.ArgumentParser()
ap.add_argument("log")
ap.add_argument("--think", type=float, required=True)
ap.add_argument("--sessions", type=int, required=True)
ap.add_argument("--turns", type=int, required=True)
ap.add_argument("--open", type=int, required=True)
ap.add_argument("--at-most", action="store_true")
ap.add_argument("--loops", type=int, default=1)
a = ap.parse_args()

reqs, done = {}, {}
for line in open(a.log):
    o = json.loads(line)
    if "done_us" in o:
        done[o["n"]] = o["done_us"]
    else:
        reqs[o["n"]] = o


def answer(n):  # what schedsrv streamed to request n: max_tokens chunks " rNtI"
    return "".join(" r%dt%d" % (n, i) for i in range(reqs[n]["body"]["max_tokens"]))


by_msgs = {json.dumps(r["body"]["messages"]): n for n, r in reqs.items()}
sessions = {}  # first request -> [requests]
bad = 0
for n, r in sorted(reqs.items()):
    msgs = r["body"]["messages"]
    roles = [m["role"] for m in msgs]
    if roles != ["user", "assistant"] * (len(msgs) // 2) + ["user"]:
        print("roles", n, roles)
        bad += 1
        continue
    turn = len(msgs) // 2 + 1
    prev = None
    for k in range(1, turn):  # the request of turn k is the one that sent msgs[:2k-1]
        p = by_msgs.get(json.dumps(msgs[:2 * k - 1]))
        if p is None or msgs[2 * k - 1]["content"] != answer(p):
            print("request", n, "turn", turn, ": assistant message", k, "is not the answer the server gave",
                  msgs[2 * k - 1]["content"], p)
            bad += 1
        prev = p
    if prev is not None:
        think = (r["t_us"] - done[prev]) / 1000
        if not a.think <= think < a.think + 60:
            print("request", n, "sent", think, "ms after its previous turn ended, want", a.think, "ms")
            bad += 1
    sessions.setdefault(by_msgs[json.dumps(msgs[:1])], []).append(n)
if len(sessions) != a.sessions or any(len(v) != a.turns for v in sessions.values()):
    print("sessions", sessions, "want", a.sessions, "of", a.turns, "turns")
    bad += 1
if a.loops > 1:
    def loop_of(n):
        return int(reqs[n]["rid"].rsplit("-", 1)[1]) % a.loops
    if any(len({loop_of(n) for n in v}) != 1 for v in sessions.values()) or \
            len({loop_of(v[0]) for v in sessions.values()}) != a.loops:
        print("sessions by loop", {k: [loop_of(n) for n in v] for k, v in sessions.items()})
        bad += 1
spans = [(reqs[min(v)]["t_us"], done[max(v)]) for v in sessions.values()]
most = max((sum(1 for s, e in spans if s <= t < e) for t, _ in spans), default=0)
if (most > a.open) if a.at_most else (most != a.open):
    print("sessions open at once: %d, want %s%d" % (most, "at most " if a.at_most else "", a.open))
    bad += 1
sys.exit(1 if bad else 0)

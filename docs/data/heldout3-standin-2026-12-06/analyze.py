#!/usr/bin/env python3
"""analyze.py SPACE RUN: one search run (runs/RUN.out, runs/RUN.json and the stand-in's own launch log
runs/state/RUN/launches.log, all from run.sh) measured against the truth of standin.decide/sporadic."""
import collections
import json
import os
import re
import sys

import rules
import spaces
import standin

space, run = sys.argv[1], sys.argv[2]
sp = spaces.SPACES[space]
axn = spaces.axn(space)
truth = {tuple(c[a] for a in axn): spaces.outcome(space, c) for c in spaces.cells(space)}
served = {k: o["d"] for k, o in truth.items() if o["kind"] == "serve"}
fmt = lambda k: " ".join("%s=%s" % (a, v) for a, v in zip(axn, k))
feats = lambda k: {"%s=%s" % (a, v) for a, v in zip(axn, k)}
EXP = {"serve": ("pass",), "garbage": ("garbage",), "late-garbage": ("garbage",),
       "late-crash": ("crash", "overload", "timeout", "garbage"), "fail": ("crash", "timeout")}

out = open("runs/%s.out" % run).read().splitlines()
launches = []
for line in out:
    m = re.match(r"^\[launch (\d+)[^\]]*\]\s+(.*)$", line)
    if not m:
        continue
    rest = m.group(2).split()
    vals, i = {}, 0
    while i < len(rest) and "=" in rest[i] and rest[i].split("=")[0] in axn:
        a, v = rest[i].split("=", 1)
        vals[a] = v
        i += 1
    if len(vals) != len(axn) or i >= len(rest):
        continue
    em = re.search(r"\[best so far: [^\]]*\]\s+(.*)$", line)
    launches.append(dict(i=int(m.group(1)), k=tuple(vals[a] for a in axn), v=rest[i], ev=em.group(1) if em else "",
                         line=line))
d = json.load(open("runs/%s.json" % run))
S = d.get("search") or {}
cells_j = {tuple(c["axes"][a] for a in axn): c for c in d["cells"]}

# the stand-in's own record of every process it was started as
procs = []
lp = "runs/state/%s/launches.log" % run
if os.path.exists(lp):
    for line in open(lp):
        r = json.loads(line)
        argv = r["key"].split()
        try:
            persona, a = standin.parse(argv[:1] + argv[1:] if argv[0] == "serve" else argv)
        except SystemExit:
            continue
        c = spaces.cell_of_args(space, a)
        r["k"] = tuple(c[x] for x in axn) if c else None
        procs.append(r)
isev = lambda p: p["what"].startswith("event") or " from bench request " in p["what"] or " in flight" in p["what"]
starts = [p for p in procs if not isev(p)]
late_ev = [p for p in procs if isev(p)]
spor = [p for p in starts if p["what"].startswith("sporadic")]
# a sporadic failure that a later start of the same cell superseded (gauntlet launched it again)
superseded = {id(p) for p in spor if any(q["k"] == p["k"] and q["n"] > p["n"] for q in starts)}

print("== %s (space %s, %d cells): %d launch lines (json: %s launches), %d engine processes started, stopped=%s" % (
    run, space, len(truth), len(launches), S.get("launches"), len(starts), S.get("stopped")))
for line in out:
    if line.startswith("gauntlet: ") and ("launched again" in line or "taken" in line):
        print("   " + line[:400])
for line in out:
    if line.startswith("search") or line.startswith("rc="):
        print("   " + line[:700])
failed = [x for x in launches if x["v"] != "pass"]
print("failed launches: %d of %d" % (len(failed), len(launches)))

if served:
    bestk = min(served, key=served.get)
    bestd = served[bestk]
    fam = sorted((k for k in served if served[k] <= bestd * 1.05), key=served.get)
    bl = [x for x in launches if x["k"] == bestk]
    print("true best %s (%.1f tok/s): %s" % (fmt(bestk), 1000 / bestd, (
        "launched %s: %s" % (",".join("#%d" % x["i"] for x in bl), ", ".join(x["v"] for x in bl))) if bl
        else "NEVER launched"))
    for k in fam[1:]:
        fl = [x for x in launches if x["k"] == k]
        if fl:
            print("   family (within 5%%) %s (%.1f tok/s): %s" % (fmt(k), 1000 / served[k],
                                                               ", ".join("#%d %s" % (x["i"], x["v"]) for x in fl)))
else:
    bestk, bestd = None, None
    print("no cell can serve")

for x in launches:
    o = truth[x["k"]]
    n_before = sum(1 for y in launches if y["k"] == x["k"] and y["i"] <= x["i"])
    sp_hit = [p for p in spor if p["k"] == x["k"]]
    if sp_hit and x["v"] != "pass":
        continue  # reported below
    if not x["v"].split("/")[0] in EXP[o["kind"]]:
        print("  VERDICT MISMATCH launch %d %s: got %s, truth %s  %s" % (x["i"], fmt(x["k"]), x["v"], o["kind"],
                                                                         x["ev"][:200]))
if spor:
    print("sporadic failures (the stand-in's log; the same cell serves on another launch):")
    for p in spor:
        gl = [x for x in launches if x["k"] == p["k"]]
        cj = cells_j.get(p["k"], {})
        print("   %s start n=%d: %s%s; gauntlet launch lines of it: %s; cell's final verdict %s/%s (%s launches)" % (
            fmt(p["k"]) if p["k"] else p["key"], p["n"], p["what"],
            " (started again by gauntlet at once)" if id(p) in superseded else "",
            ", ".join("#%d %s" % (x["i"], x["v"]) for x in gl) or "none shown",
            cj.get("verdict"), cj.get("cause"), cj.get("launches")))
        for x in gl[:1]:
            print("      evidence: %s" % x["ev"][:300])
    again = [p for p in starts if p["k"] in {q["k"] for q in spor} and p["n"] >= 2]
    print("   cells with a sporadic failure launched again: %d of %d" % (
        len({p["k"] for p in again}), len({p["k"] for p in spor})))
for p in late_ev:
    print("late event: %s n=%d: %s" % (fmt(p["k"]) if p["k"] else p["key"], p["n"], p["what"]))

print("per rule: launched cells failing by it (launch numbers) / launches holding its culprit after its first failure")
for r in rules.RULES[space]:
    hits = [x for x in launches if rules.rule_of(space, dict(zip(axn, x["k"]))) is r]
    if not hits:
        print("   %-90s 0" % r[0][:90])
        continue
    cul = r[3](dict(zip(axn, hits[0]["k"])))
    after = [x for x in launches if x["i"] > hits[0]["i"] and cul <= feats(x["k"])]
    print("   %-90s %d (%s) / %d after" % (r[0][:90], len(hits), ",".join(str(x["i"]) for x in hits), len(after)))

# values a failure line spells (as the matrix spells them), and how often they were launched after that line
print("values spelled in a crashed or timed-out launch's evidence, launched more than twice after it (numbers left out):")
allv = [(a, v) for a, fl, vs in sp["axes"] for v in vs if not re.match(r"^[\d.]+$", v)]
any_ = False
for a, v in allv:
    first = next((x for x in failed if x["v"].split("/")[0] in ("crash", "timeout") and re.search(r"(?<![\w.])%s(?![\w.])" % re.escape(v), x["ev"])), None)
    if not first:
        continue
    later = [x for x in launches if x["i"] > first["i"] and x["k"][axn.index(a)] == v]
    if len(later) > 2:
        any_ = True
        print("   %s=%s: named first by launch %d (%s), %d launches hold it after" % (a, v, first["i"], first["v"],
                                                                                    len(later)))
if not any_:
    print("   none")

best = d.get("best")
bc = next((c for c in d["cells"] if c["id"] == best), None)
if bc:
    k = tuple(bc["axes"][a] for a in axn)
    td = served.get(k) or truth[k].get("d")
    print("named best: %s  (truth: %s, %.1f tok/s; %.1f%% of the true best's speed)%s" % (
        fmt(k), truth[k]["kind"], 1000 / td if td else 0, 100 * bestd / td if td and bestd else 0,
        "  == TRUE BEST" if k == bestk else ""))
else:
    print("named best: none")

wrong_serving, wrong_blame, spor_blame = [], [], []
spor_ids = {cells_j[p["k"]]["id"][:8] for p in spor if p["k"] in cells_j and id(p) not in superseded}
for c in d["cells"]:
    if c.get("cause") != "pruned":
        continue
    k = tuple(c["axes"][a] for a in axn)
    ev = c.get("evidence") or ""
    pre = ev.split('"')[0]
    if not re.search(r"predicted (crash|garbage|timeout|wrong|overload)|nothing can pass|fail", pre):
        continue
    o = truth[k]
    if any(i in ev for i in spor_ids) or re.search(r"Watchdog|EADDRINUSE|DistNetworkError|collective", ev):
        spor_blame.append((k, pre))
    blamed = set(m.group(0) for m in re.finditer(r"\b(%s)=[\w.]+" % "|".join(axn), pre)) & feats(k)
    if o["kind"] == "serve":
        wrong_serving.append((served[k], k, pre))
    else:
        cd = dict(zip(axn, k))
        cul = set()
        for r in rules.RULES[space]:
            if r[2](cd):
                cul |= r[3](cd)
        if blamed and not (blamed & cul):
            wrong_blame.append((k, cul, pre))
norm = lambda s: re.sub(r"\b[0-9a-f]{8,16}\b", "#", re.sub(r"^budget spent; ", "", s))[:260]
print("pruned as failing but truly serve: %d" % len(wrong_serving))
agg = collections.defaultdict(list)
for dd, k, pre in wrong_serving:
    agg[norm(pre)].append((dd, k))
for r, ks in sorted(agg.items(), key=lambda x: min(y[0] for y in x[1])):
    f = min(ks)
    print("   %2d cells (fastest %s %.1f tok/s%s): %s" % (len(ks), fmt(f[1]), 1000 / f[0],
                                                        ", THE TRUE BEST" if f[1] == bestk else "", r))
print("pruned failing cells whose reason blames none of the true culprits: %d" % len(wrong_blame))
agg = collections.defaultdict(list)
for k, cul, pre in wrong_blame:
    agg[(norm(pre), ",".join(sorted(cul)))].append(k)
for (r, cul), ks in sorted(agg.items(), key=lambda x: -len(x[1])):
    print("   %2d cells (e.g. %s), truth %s: %s" % (len(ks), fmt(ks[0]), cul, r))
print("pruned cells whose reason rests on a sporadic failure: %d" % len(spor_blame))
agg = collections.defaultdict(list)
for k, pre in spor_blame:
    agg[norm(pre)].append(k)
for r, ks in sorted(agg.items(), key=lambda x: -len(x[1])):
    print("   %2d cells (e.g. %s, truth %s): %s" % (len(ks), fmt(ks[0]), truth[ks[0]]["kind"], r))
if bestk:
    tb = cells_j.get(bestk)
    if tb and tb.get("cause") == "pruned":
        print("the true best was pruned: %s" % (tb.get("evidence") or "")[:400])
    elif tb:
        print("the true best's cell: verdict %s/%s, %s launches" % (tb.get("verdict"), tb.get("cause"), tb.get("launches")))
print("every prune reason, by the pruned cell's truth (cell ids as #, numbers as N):")
agg = collections.defaultdict(list)
for c in d["cells"]:
    if c.get("cause") != "pruned":
        continue
    k = tuple(c["axes"][a] for a in axn)
    o = truth[k]
    ev = re.sub(r"\b[0-9a-f]{8,16}\b", "#", c.get("evidence") or "")
    ev = re.sub(r"\d+(\.\d+)?(x|%)", r"N\2", ev)
    agg[(o["kind"] + ("/" + o.get("phase", "") if o["kind"] == "fail" else ""), ev[:230])].append(k)
for (kind, ev), ks in sorted(agg.items(), key=lambda x: (x[0][0], -len(x[1]))):
    print("   %3d %-13s e.g. %s | %s" % (len(ks), kind, fmt(ks[0]), ev))

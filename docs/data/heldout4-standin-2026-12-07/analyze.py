#!/usr/bin/env python3
"""analyze.py SPACE RUN: one search run (runs/RUN.out, runs/RUN.json, runs/RUN.txt and the stand-in's own launch
log runs/state/RUN/launches.log, all from run.sh) measured against the truth of standin.decide."""
import collections
import json
import os
import re
import sys

import rules
import spaces

space, run = sys.argv[1], sys.argv[2]
axn = spaces.axn(space)
truth = {tuple(c[a] for a in axn): spaces.outcome(space, c) for c in spaces.cells(space)}
served = {k: o["d"] for k, o in truth.items() if o["kind"] == "serve"}
fmt = lambda k: " ".join("%s=%s" % (a, v) for a, v in zip(axn, k))
feats = lambda k: {"%s=%s" % (a, v) for a, v in zip(axn, k)}
EXP = {"serve": ("pass",), "garbage": ("garbage",), "wrong": ("wrong",),
       "late-crash": ("crash", "overload", "timeout", "garbage"), "fail": ("crash",), "hang": ("timeout",)}

raw = open("runs/%s.out" % run, "rb").read()
out = raw.decode("utf-8", "replace").splitlines()
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

procs = []
lp = "runs/state/%s/launches.log" % run
if os.path.exists(lp):
    for line in open(lp):
        r = json.loads(line)
        r["k"] = tuple(r["cell"][a] for a in axn)
        procs.append(r)
starts = [p for p in procs if not p["what"].startswith("event")]
late_ev = [p for p in procs if p["what"].startswith("event")]

print("== %s (space %s, %d cells): %d launch lines (json: %s launches), %d engine processes started, stopped=%s" % (
    run, space, len(truth), len(launches), S.get("launches"), len(starts), S.get("stopped")))
for line in out:
    if line.startswith("gauntlet: ") and not re.search(r"no GPU found|tokens: no tokenizer", line):
        print("   " + line[:400])
for line in out:
    if line.startswith("search") or line.startswith("rc="):
        print("   " + line[:900])
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
        print("   family (within 5%%) %s (%.1f tok/s): %s" % (fmt(k), 1000 / served[k],
                                                           ", ".join("#%d %s" % (x["i"], x["v"]) for x in fl)
                                                           or "never launched"))
else:
    bestk, bestd = None, None
    print("no cell can serve")

print("verdicts against the truth:")
nm = 0
for x in launches:
    o = truth[x["k"]]
    if x["v"].split("/")[0] not in EXP[o["kind"]]:
        nm += 1
        print("  VERDICT MISMATCH launch %d %s: got %s, truth %s%s  %s" % (
            x["i"], fmt(x["k"]), x["v"], o["kind"], "/" + o["phase"] if "phase" in o else "", x["ev"][:260]))
if not nm:
    print("   all %d launch verdicts agree with the truth's kind" % len(launches))
for p in late_ev:
    print("late event: %s n=%d: %s" % (fmt(p["k"]), p["n"], p["what"]))

print("per rule: launched cells failing by it (launch numbers) / launches holding its culprit after its first "
      "failure / evidence quoting the culprit line")
for r in rules.RULES[space]:
    hits = [x for x in launches if rules.rule_of(space, dict(zip(axn, x["k"]))) is r]
    if not hits:
        print("   %-100s 0" % r[0][:100])
        continue
    cul = r[3](dict(zip(axn, hits[0]["k"])))
    after = [x for x in launches if x["i"] > hits[0]["i"] and cul <= feats(x["k"])]
    q = ""
    if r[4]:
        fullev = lambda x: x["ev"] + " " + (cells_j.get(x["k"], {}).get("evidence") or "")
        good = [x for x in hits if re.search(r[4], fullev(x))]
        q = " / culprit line quoted in %d of %d" % (len(good), len(hits))
    print("   %-100s %d (%s) / %d after%s" % (r[0][:100], len(hits), ",".join(str(x["i"]) for x in hits),
                                           len(after), q))
    if r[4]:
        seen = set()
        for x in hits:
            if not re.search(r[4], fullev(x)):
                e = re.sub(r"\d", "N", x["ev"][:200])
                if e not in seen:
                    seen.add(e)
                    print("      launch %d (%s) quoted instead: %s" % (x["i"], x["v"], x["ev"][:300]))

print("values spelled in a crashed or timed-out launch's evidence, launched more than twice after it:")
any_ = False
for a in axn:
    for v in sorted({k[axn.index(a)] for k in truth}):
        if re.match(r"^[\d.]+$", v):
            continue
        first = next((x for x in failed if x["v"].split("/")[0] in ("crash", "timeout")
                      and re.search(r"(?<![\w.])%s(?![\w.])" % re.escape(v), x["ev"])), None)
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

wrong_serving, wrong_blame = [], []
for c in d["cells"]:
    if c.get("cause") != "pruned":
        continue
    k = tuple(c["axes"][a] for a in axn)
    ev = c.get("evidence") or ""
    pre = ev.split('"')[0]
    if not re.search(r"predicted (crash|garbage|timeout|wrong|overload)|nothing can pass|fail", pre):
        continue
    o = truth[k]
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
norm = lambda s: re.sub(r"\b[0-9a-f]{8,16}\b", "#", re.sub(r"^budget spent; ", "", s))[:300]
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
# a prune reason that cites failed cells by id: do the values it blames include a culprit of the cited cell's rule?
by_id = {c["id"][:8]: tuple(c["axes"][a] for a in axn) for c in d["cells"]}
cite_bad = collections.defaultdict(list)
for c in d["cells"]:
    if c.get("cause") != "pruned":
        continue
    ev = c.get("evidence") or ""
    pre = ev.split('"')[0]
    m = re.search(r"predicted (crash|garbage|timeout|wrong answers)[^:]*: (.*?) (crashed|answered|timed out)", pre)
    if not m:
        continue
    blamed = set(re.findall(r"\b(?:%s)=[\w.]+" % "|".join(axn), m.group(2)))
    ids = re.findall(r"\b([0-9a-f]{8})\b", pre)
    cited = [by_id[i] for i in ids if i in by_id]
    if not blamed or not cited:
        continue
    culs = set()
    for k in cited:
        r = rules.rule_of(space, dict(zip(axn, k)))
        if r:
            culs |= r[3](dict(zip(axn, k)))
    if culs and not (blamed & culs):
        k = tuple(c["axes"][a] for a in axn)
        cite_bad[(m.group(2), ",".join(sorted(culs)))].append((truth[k]["kind"], k))
print("prune reasons whose blamed values are innocent in the very cells they cite: %d cells" %
      sum(len(v) for v in cite_bad.values()))
for (bl, cul), ks in sorted(cite_bad.items(), key=lambda x: -len(x[1])):
    kinds = collections.Counter(kd for kd, k in ks)
    print("   %2d cells (%s; e.g. %s): blamed '%s', the cited failures' culprits %s" % (
        len(ks), ", ".join("%d %s" % (v, kd) for kd, v in kinds.items()), fmt(ks[0][1]), bl, cul))
if bestk:
    tb = cells_j.get(bestk)
    if tb and tb.get("cause") == "pruned":
        print("the true best was pruned: %s" % (tb.get("evidence") or "")[:400])
    elif tb:
        print("the true best's cell: verdict %s/%s, %s launches" % (tb.get("verdict"), tb.get("cause"),
                                                                   tb.get("launches")))

# what the reports show: escape bytes, carriage returns, bytes that are not UTF-8
print("the reports: control bytes and bytes that are not UTF-8")
for path in ["runs/%s.out" % run, "runs/%s.txt" % run, "runs/%s/report.md" % run, "runs/%s/report.html" % run,
             "runs/%s.json" % run]:
    if not os.path.exists(path):
        continue
    b = open(path, "rb").read()
    try:
        b.decode("utf-8")
        bad = 0
    except UnicodeDecodeError:
        bad = sum(1 for _ in re.finditer(rb"[\x80-\xff]", b)) - len(re.findall(rb"[\x80-\xff]", b.decode(
            "utf-8", "ignore").encode()))
    esc = b.count(b"\x1b")
    cr = b.count(b"\r")
    rep = b.count("\ufffd".encode())
    jesc = b.count(b"\\u001b") + b.count(b"\\x1b") + b.count(b"\\x1B")
    print("   %-28s %8d bytes: ESC %d, CR %d, not UTF-8 %d, U+FFFD %d, escaped ESC (\\u001b or \\x1b) %d" % (
        path, len(b), esc, cr, bad, rep, jesc))
print("every prune reason, by the pruned cell's truth (cell ids as #, numbers as N):")
agg = collections.defaultdict(list)
for c in d["cells"]:
    if c.get("cause") != "pruned":
        continue
    k = tuple(c["axes"][a] for a in axn)
    o = truth[k]
    ev = re.sub(r"\b[0-9a-f]{8,16}\b", "#", c.get("evidence") or "")
    ev = re.sub(r"\d+(\.\d+)?(x|%)", r"N\2", ev)
    agg[(o["kind"] + ("/" + o.get("phase", "") if "phase" in o else ""), ev[:240])].append(k)
for (kind, ev), ks in sorted(agg.items(), key=lambda x: (x[0][0], -len(x[1]))):
    print("   %3d %-15s e.g. %s | %s" % (len(ks), kind, fmt(ks[0]), ev))

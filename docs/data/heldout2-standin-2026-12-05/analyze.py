#!/usr/bin/env python3
"""analyze.py SPACE RUN: one search run (runs/RUN.out and runs/RUN.json, from run.sh) measured
against the truth of spaces.py/standin.decide."""
import collections, json, re, sys
import spaces, rules

space, run = sys.argv[1], sys.argv[2]
sp = spaces.SPACES[space]
axn = [a[0] for a in sp["axes"]]
truth = {tuple(c[a] for a in axn): spaces.outcome(space, c) for c in spaces.cells(space)}
served = {k: o["d"] for k, o in truth.items() if o["kind"] == "serve"}
bestk = min(served, key=served.get)
bestd = served[bestk]
family = {k for k, d in served.items() if d <= bestd * 1.03}
fmt = lambda k: " ".join("%s=%s" % (a, v) for a, v in zip(axn, k))
feats = lambda k: {"%s=%s" % (a, v) for a, v in zip(axn, k)}
EXP = {"serve": "pass", "garbage": "garbage", "wrong": "wrong", "wrong-load": "wrong", "overload": "overload",
       "hang-start": "timeout", "hang-request": "timeout", "fail": "crash"}

out = open("runs/%s.out" % run).read().splitlines()
launches = []
for l in out:
    m = re.match(r"^\[launch (\d+)[^\]]*\]\s+(.*)$", l)
    if not m:
        continue
    rest = m.group(2).split()
    vals, i = {}, 0
    while i < len(rest) and "=" in rest[i] and rest[i].split("=")[0] in axn:
        a, v = rest[i].split("=", 1); vals[a] = v; i += 1
    if len(vals) != len(axn) or i >= len(rest):
        continue
    launches.append((len(launches) + 1, tuple(vals[a] for a in axn), rest[i], l))
d = json.load(open("runs/%s.json" % run))
S = d.get("search") or {}
print("== %s (space %s, %d cells): %d launches (json: %s launches), stopped=%s" % (
    run, space, len(truth), len(launches), S.get("launches"), S.get("stopped")))
for l in out:
    if l.startswith("search") or l.startswith("rc="):
        print("   " + l[:300])
failed = [x for x in launches if x[2] != "pass"]
print("failed launches: %d of %d" % (len(failed), len(launches)))
first_b = next((x for x in launches if x[1] == bestk), None)
print("true best %s (%.1f tok/s): %s" % (fmt(bestk), 1000 / bestd,
      "first launched #%d after %d failed launches" % (first_b[0], sum(1 for x in launches if x[0] < first_b[0] and x[2] != "pass"))
      if first_b else "NEVER launched"))
for x in launches:
    o = truth[x[1]]
    if not x[2].startswith(EXP[o["kind"]]):
        print("  VERDICT MISMATCH launch %d %s: got %s, truth %s" % (x[0], fmt(x[1]), x[2], o["kind"]))
print("per rule: launched cells failing by it (launch numbers) / launches holding its culprit after its first failure")
for r in rules.RULES[space]:
    hits = [x for x in launches if rules.rule_of(space, dict(zip(axn, x[1]))) is r]
    if not hits:
        print("   %-74s 0" % r[0][:74]); continue
    cul = r[3](dict(zip(axn, hits[0][1])))
    after = [x for x in launches if x[0] > hits[0][0] and cul <= feats(x[1])]
    print("   %-74s %d (%s) / %d after" % (r[0][:74], len(hits), ",".join(str(x[0]) for x in hits), len(after)))
best = d.get("best")
bc = next((c for c in d["cells"] if c["id"] == best), None)
if bc:
    k = tuple(bc["axes"][a] for a in axn)
    td = served.get(k)
    print("named best: %s  (true %.1f tok/s, %.1f%% below the true best)%s" % (
        fmt(k), 1000 / td if td else 0, (1 - bestd / td) * 100 if td else 100,
        "  == TRUE BEST" if k == bestk else ""))
else:
    print("named best: none")
wrong_serving, wrong_blame = [], []
for c in d["cells"]:
    if c.get("cause") != "pruned":
        continue
    k = tuple(c["axes"][a] for a in axn)
    pre = (c.get("evidence") or "").split('"')[0]
    blamed = set(m.group(0) for m in re.finditer(r"\b(%s)=[\w.]+" % "|".join(axn), pre))
    blamed &= feats(k)  # a value of another cell ("ub=256 (here 512)") blames nothing here
    if not re.search(r"predicted (crash|garbage|timeout|wrong|overload)|nothing can pass", pre):
        continue
    o = truth[k]
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
print("pruned as failing but truly serve: %d" % len(wrong_serving))
agg = collections.defaultdict(list)
for dd, k, pre in wrong_serving:
    agg[re.sub(r"\b[0-9a-f]{16}\b", "#", re.sub(r"^budget spent; ", "", pre))[:170]].append((dd, k))
for r, ks in sorted(agg.items(), key=lambda x: min(y[0] for y in x[1])):
    f = min(ks)
    print("   %2d cells (fastest %.1f tok/s%s): %s" % (len(ks), 1000 / f[0], ", THE TRUE BEST" if f[1] == bestk else
          (", within 3%% of the best" if f[1] in family else ""), r))
print("pruned failing cells whose reason blames none of the true culprit: %d" % len(wrong_blame))
agg = collections.defaultdict(list)
for k, cul, pre in wrong_blame:
    agg[(re.sub(r"\b[0-9a-f]{16}\b", "#", re.sub(r"^budget spent; ", "", pre))[:170], ",".join(sorted(cul)))].append(k)
for (r, cul), ks in sorted(agg.items(), key=lambda x: -len(x[1])):
    print("   %2d cells, truth %s: %s" % (len(ks), cul, r))
tb = next((c for c in d["cells"] if tuple(c["axes"][a] for a in axn) == bestk), None)
if tb and tb.get("cause") == "pruned":
    print("the true best was pruned: %s" % (tb.get("evidence") or "")[:200])

#!/usr/bin/env python3
"""analyze.py SPACE RUN: the measures of one search run against the truth."""
import json, re, sys
import spaces, rules

space, run = sys.argv[1], sys.argv[2]
sp = spaces.SPACES[space]
axn = [a[0] for a in sp["axes"]]
truth = {}
for c in spaces.cells(space):
    o = spaces.outcome(space, c)
    truth[tuple(c[a] for a in axn)] = o
served = {k: o[1] for k, o in truth.items() if o[0] == "serve"}
bestk = min(served, key=served.get)
bestd = served[bestk]
family = {k for k, d in served.items() if d <= bestd * 1.05}
fmt = lambda k: " ".join("%s=%s" % (a, v) for a, v in zip(axn, k))

out = open("runs/%s.out" % run).read().splitlines()
launches = []
for l in out:
    m = re.match(r"^\[launch (\d+)[^\]]*\]\s+(.*)$", l)
    if not m:
        continue
    again = "measured again" in l.split("]")[0]
    rest = m.group(2).split()
    vals = {}
    i = 0
    while i < len(rest) and "=" in rest[i] and rest[i].split("=")[0] in axn:
        a, v = rest[i].split("=", 1); vals[a] = v; i += 1
    verdict = rest[i]
    launches.append((int(m.group(1)), tuple(vals[a] for a in axn), verdict, again, l))
d = json.load(open("runs/%s.json" % run))
S = d.get("search") or {}
print("== %s (space %s): %d launches (json: %s launches, %s cells), stopped=%s" % (
    run, space, len(launches), S.get("launches"), S.get("launched"), S.get("stopped")))
if S.get("stop_why"):
    print("   stop_why:", S["stop_why"])
for l in out:
    if l.startswith("search:") or l.startswith("rc="):
        print("   " + l[:300])
failed = [x for x in launches if x[2] != "pass"]
print("failed launches: %d of %d" % (len(failed), len(launches)))
first_fam = next((x for x in launches if x[1] in family), None)
if first_fam:
    nf = sum(1 for x in launches if x[0] < first_fam[0] and x[2] != "pass")
    print("true best %s (%.1f tok/s); family %d cells; first family launch #%d after %d failed launches" % (
        fmt(bestk), 1000 / bestd, len(family), first_fam[0], nf))
else:
    print("true best %s (%.1f tok/s); family %d cells; NEVER launched" % (fmt(bestk), 1000 / bestd, len(family)))
# verdict consistency with truth
for x in launches:
    o = truth[x[1]]
    exp = {"serve": "pass", "garbage": "garbage", "hang": "timeout", "fail": "crash"}[o[0]]
    if not x[2].startswith(exp):
        print("  VERDICT MISMATCH launch %d %s: got %s, truth %s" % (x[0], fmt(x[1]), x[2], o[0]))
# per rule
print("per rule: launched cells failing by it / launches holding its culprit after its first failure")
for r in rules.RULES[space]:
    hits = [x for x in launches if rules.rule_of(space, dict(zip(axn, x[1]))) is r]
    if not hits:
        print("   %-60s 0" % r[0]); continue
    first = hits[0][0]
    cul = r[3](dict(zip(axn, hits[0][1])))
    feats = lambda k: {"%s=%s" % (a, v) for a, v in zip(axn, k)}
    after = [x for x in launches if x[0] > first and cul <= feats(x[1])]
    extra = ""
    if r[4].startswith("single"):
        held = [x for x in launches if cul <= feats(x[1])]
        extra = "; cells holding %s: %d" % (",".join(cul), len(held))
    print("   %-60s %d (launches %s) / %d after%s" % (r[0], len(hits), ",".join(str(x[0]) for x in hits), len(after), extra))
# named best
best = d.get("best")
bc = next((c for c in d["cells"] if c["id"] == best), None)
if bc:
    k = tuple(bc["axes"][a] for a in axn)
    td = served.get(k)
    print("named best: %s  (true %.1f tok/s, %.1f%% below the true best)%s" % (
        fmt(k), 1000 / td if td else 0, (1 - bestd / td) * 100 if td else 100,
        "  == TRUE BEST" if k == bestk else ("  within 3%" if td and td <= bestd * 1.03 else "  NOT within 3%")))
else:
    print("named best: none")
# pruned reasons vs truth
wrong_serving, wrong_blame = [], []
for c in d["cells"]:
    if c.get("cause") != "pruned":
        continue
    k = tuple(c["axes"][a] for a in axn)
    ev = c["evidence"] or ""
    pre = ev.split('"')[0]
    blamed = set(m.group(0) for m in re.finditer(r"\b(%s)=[\w.]+" % "|".join(axn), pre))
    predicts_fail = re.search(r"predicted (crash|garbage|timeout|wrong|overload)|nothing can pass", pre)
    o = truth[k]
    if not predicts_fail:
        continue
    if o[0] == "serve":
        wrong_serving.append((served[k], k, blamed, pre))
    else:
        cd = dict(zip(axn, k))
        cul = set()
        for r in rules.RULES[space]:
            if r[2](cd):
                cul |= r[3](cd)
        if blamed and not (blamed & cul):
            wrong_blame.append((k, blamed, cul, pre))
print("pruned as failing but truly serve: %d" % len(wrong_serving))
import collections
agg = collections.defaultdict(list)
for dd, k, b, pre in wrong_serving:
    agg[re.sub(r"\d+", "#", re.sub(r"^budget spent; ", "", pre))[:150]].append((dd, k))
for r, ks in sorted(agg.items(), key=lambda x: min(y[0] for y in x[1])):
    fastest = min(ks)
    print("   %2d cells (fastest %.1f tok/s%s): %s" % (len(ks), 1000 / fastest[0], ", THE TRUE BEST" if fastest[1] == bestk else (", in best family" if fastest[1] in family else ""), r))
print("pruned failing cells whose reason blames none of the true culprit: %d" % len(wrong_blame))
agg = collections.defaultdict(list)
for k, b, cul, pre in wrong_blame:
    agg[(re.sub(r"\d+", "#", re.sub(r"^budget spent; ", "", pre))[:150], ",".join(sorted(cul)))].append(k)
for (r, cul), ks in sorted(agg.items(), key=lambda x: -len(x[1])):
    print("   %2d cells, truth %s: %s" % (len(ks), cul, r))

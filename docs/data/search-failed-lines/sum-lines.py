#!/usr/bin/env python3
"""sum-lines.py -- sums the "failed launches by what the failure lines name" tables of
run-lines.sh's outputs (lines-{old,new}-sS-bB.txt in the current directory) over the seeds:
per budget and class of lines, each version's spaces, success, the median failed launches
of each seed, the mean failed launches, the mean failed launches of one value's doing and
the median hours on failures of each seed."""
import collections
import glob
import re

LINE = re.compile(r"\s+search \(budget [\d%]+\)\s+(name nothing|name a pair|name a value|value and flag)"
                  r"\s+(\d+)\s+([\d.]+)%\s+(\d+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)")
rows = collections.defaultdict(list)
for f in sorted(glob.glob("lines-*-s*-b*.txt")):
    version, seed, share = re.search(r"lines-(\w+)-s(\d+)-b([\d.]+)\.txt", f).groups()
    text = open(f).read()
    if "failed launches by what" not in text:
        continue
    table = text.split("failed launches by what the failure lines name")[1].split("\n\n")[0]
    for line in table.splitlines():
        m = LINE.match(line)
        if m:
            cls, n, succ, med, mean, one, hours = m.groups()
            rows[(share, cls, version)].append((int(n), float(succ), float(med), float(mean), float(one), float(hours)))
for share in sorted({k[0] for k in rows}, reverse=True):
    print(f"budget share {share}")
    for cls in ("name nothing", "name a pair", "name a value", "value and flag"):
        for version in ("old", "new"):
            r = rows.get((share, cls, version))
            if not r:
                continue
            n = sum(x[0] for x in r)
            print(f"  {cls:15} {version}: {n} spaces, success {sum(x[0] * x[1] for x in r) / n:.1f}%, "
                  f"failed {'/'.join(f'{x[2]:.0f}' for x in r)} (mean {sum(x[0] * x[3] for x in r) / n:.1f}), "
                  f"one value's doing {sum(x[0] * x[4] for x in r) / n:.2f}, "
                  f"hours {'/'.join(f'{x[5]:.2f}' for x in r)}")

#!/usr/bin/env python3
# calibration.py FILE -- the CALIB lines of a gauntlet-search-bench run built with
# experiment.patch (T_CALIB=1, on stderr: the chosen cell's predicted chance to serve, its
# true failure, whether the space has a memory limit, the memory model's chance to run out,
# the blockers' chance to clear, the unexplained share, whether the cell is past the limit),
# as tables of predicted against true, by tenths of the prediction.
import collections
import sys

rows = [l.split()[1:] for l in open(sys.argv[1]) if l.startswith('CALIB')]


def table(title, pred, actual, keep=lambda r: True):
    b = collections.defaultdict(lambda: [0, 0.0, 0])
    for r in rows:
        if not keep(r):
            continue
        p = pred(r)
        i = min(int(p * 10), 9)
        b[i][0] += 1
        b[i][1] += p
        b[i][2] += actual(r)
    print(title)
    for i in sorted(b):
        n, sp, ok = b[i]
        print(f"  {i / 10:.1f}-{(i + 1) / 10:.1f}: n={n:5d} predicted {sp / n:.3f} true {ok / n:.3f}")


# SIM_FAIL_NONE is -1, SIM_FAIL_OOM 4
table("chance to serve right", lambda r: float(r[0]), lambda r: int(r[1]) == -1)
table("memory: chance to fit", lambda r: 1 - float(r[3]), lambda r: 1 - int(r[6]),
      lambda r: r[2] == '1' and float(r[3]) > 0)
table("blockers: chance of no other failure", lambda r: float(r[4]), lambda r: int(r[1]) in (-1, 4))

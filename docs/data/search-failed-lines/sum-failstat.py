#!/usr/bin/env python3
"""sum-failstat.py FILE -- sums the FAILSTAT lines of FILE (T_FAILSTAT=1 of experiment.patch
writes them on stderr, one per search: its success, launches, cells, the class of its
space's lines L0-L3 as sim_space_lines numbers them, then per failure class "FIRST/REPEAT":
the failed launches that were the first of their rule, and those that repeated one). Prints
per class of lines: the spaces, the successes, the mean failed launches of one value's
doing (hang, arch, batch), and per failure class the mean first and repeated failed
launches ("arch=0.9+1.2")."""
import collections
import sys

NAMES = ["hang", "arch", "config", "requires", "oom", "garbage", "batch"]
ONE_VALUE = [NAMES.index(n) for n in ("hang", "arch", "batch")]

if len(sys.argv) != 2:
    sys.exit("usage: sum-failstat.py FILE")
first = collections.defaultdict(lambda: [0] * len(NAMES))
repeat = collections.defaultdict(lambda: [0] * len(NAMES))
spaces = collections.Counter()
successes = collections.Counter()
with open(sys.argv[1]) as f:
    for n, line in enumerate(f, 1):
        if not line.startswith("FAILSTAT"):
            continue
        fields = line.split()
        if len(fields) != 5 + len(NAMES):
            sys.exit(f"{sys.argv[1]}:{n}: a FAILSTAT line of {len(fields)} fields, not {5 + len(NAMES)}")
        lines = fields[4]
        spaces[lines] += 1
        successes[lines] += int(fields[1])
        for i, pair in enumerate(fields[5:]):
            a, b = pair.split("/")
            first[lines][i] += int(a)
            repeat[lines][i] += int(b)
for lines in sorted(spaces):
    m = spaces[lines]
    one = sum(first[lines][i] + repeat[lines][i] for i in ONE_VALUE) / m
    per = " ".join(f"{NAMES[i]}={first[lines][i] / m:.1f}+{repeat[lines][i] / m:.1f}" for i in range(len(NAMES)))
    print(f"{lines} {m} succ={successes[lines]} onevalue={one:.2f} {per}")

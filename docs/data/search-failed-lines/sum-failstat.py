#!/usr/bin/env python3
"""sum-failstat.py FILE -- sums the FAILSTAT lines (T_FAILSTAT=1 of experiment.patch, on
stderr: one per search, its success, launches, cells, the class of its space's lines L0-L3 as
sim_space_lines numbers them, then per failure class the failed launches that were the first of
their rule and those that repeated a rule) per class of lines: spaces, successes, the mean failed launches of one value's doing
(hang, arch, batch), and per failure class the mean first and repeated failed launches
("arch=0.9+1.2")."""
import re,collections,sys
names=['hang','arch','config','requires','oom','garbage','batch']
agg=collections.defaultdict(lambda: [0]*14)
cnt=collections.Counter(); succ=collections.Counter()
for l in open(sys.argv[1]):
    if not l.startswith('FAILSTAT'): continue
    p=l.split()
    L=p[4]; cnt[L]+=1; succ[L]+=int(p[1])
    for i,v in enumerate(p[5:]):
        a,b=v.split('/')
        agg[L][2*i]+=int(a); agg[L][2*i+1]+=int(b)
for L in sorted(agg):
    one=sum(agg[L][2*i]+agg[L][2*i+1] for i in (0,1,6))
    print(L, cnt[L], f"succ={succ[L]}", f"onevalue={one/cnt[L]:.2f}", ' '.join(f"{names[i]}={agg[L][2*i]/cnt[L]:.1f}+{agg[L][2*i+1]/cnt[L]:.1f}" for i in range(7)))

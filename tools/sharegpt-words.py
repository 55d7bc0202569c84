#!/usr/bin/env python3
"""sharegpt-words.py N OUT: a ShareGPT-format file of N two-turn conversations of plain
words (seeded, the same file every time), for the bench's own outputs to be judged on a
dataset workload (tools/bench-false-alarms.sh, tests/integration/llamacpp-bench-outputs.sh)."""
import json
import random
import sys

rng = random.Random(31)
words = ["river", "stone", "light", "cloud", "seven", "garden", "quiet", "yellow", "market", "window",
         "the", "of", "and", "a", "to", "paper", "mountain", "engine", "brave", "slowly", "Why", "how", "is", "?", "."]
conv = []
for i in range(int(sys.argv[1])):
    p = " ".join(rng.choice(words) for _ in range(rng.randint(3, 40)))
    r = " ".join(rng.choice(words) for _ in range(rng.randint(5, 60)))
    conv.append({"id": str(i), "conversations": [{"from": "human", "value": p}, {"from": "gpt", "value": r}]})
with open(sys.argv[2], "w") as f:
    json.dump(conv, f)

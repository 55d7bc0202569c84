#!/usr/bin/env bash
# tools/sizes.sh -- the size rules of docs/hacking.md "Sizes", checked on src/:
#   - no file under src/ over 2,100 lines, none of src/bench/ over 1,500;
#   - no function over 150 lines (a function: a line starting a definition at column 0,
#     to the "}" alone at column 0 that closes it);
#   - struct bench (src/bench/bench_int.h) with at most 25 fields of its own.
# The exceptions are named in the EXEMPT list below, each with why, and docs/hacking.md
# says them too. Fails (exit 1) with one line a breach. Usage: tools/sizes.sh [ROOT]
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
python3 - <<'PY'
import glob, re, sys

FILE_MAX, BENCH_FILE_MAX, FN_MAX, BENCH_FIELDS_MAX = 2100, 1500, 150, 25
EXEMPT = {}  # "file:function": why (none today)

problems = []
for f in sorted(glob.glob("src/**/*.[ch]", recursive=True)):
    lines = open(f, encoding="utf-8").read().split("\n")
    n = len(lines) - (1 if lines and lines[-1] == "" else 0)
    cap = BENCH_FILE_MAX if f.startswith("src/bench/") else FILE_MAX
    if n > cap:
        problems.append(f"{f}: {n} lines, over {cap}")
    if not f.endswith(".c"):
        continue
    i = 0
    while i < len(lines):
        m = re.match(r"^(?!static inline)(?:static\s+)?[A-Za-z_][\w\s\*]*?\b(\w+)\s*\(", lines[i])
        if m and not lines[i].startswith(("#", "/", " ", "\t")) and "=" not in lines[i].split("(")[0] \
                and not lines[i].rstrip().endswith(";"):
            j = i
            while j < len(lines) and not lines[j].rstrip().endswith("{") and not lines[j].rstrip().endswith(";"):
                j += 1
            if j < len(lines) and lines[j].rstrip().endswith("{"):
                k = j + 1
                while k < len(lines) and lines[k] != "}":
                    k += 1
                length = k - i + 1
                name = f"{f}:{m.group(1)}"
                if length > FN_MAX and name not in EXEMPT:
                    problems.append(f"{name}: {length} lines, over {FN_MAX}")
                i = k
        i += 1

text = open("src/bench/bench_int.h", encoding="utf-8").read()
m = re.search(r"^struct bench \{\n(.*?)^\};", text, re.S | re.M)
if not m:
    problems.append("src/bench/bench_int.h: no struct bench")
else:
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    fields = sum(len([d for d in s.split(",") if d.strip()]) for s in body.split(";") if s.strip())
    if fields > BENCH_FIELDS_MAX:
        problems.append(f"struct bench: {fields} fields of its own, over {BENCH_FIELDS_MAX}")

for p in problems:
    print("sizes: " + p)
if problems:
    sys.exit(1)
print(f"sizes: files within {FILE_MAX} lines (bench {BENCH_FILE_MAX}), functions within {FN_MAX}, "
      f"struct bench {fields} fields")
PY

#!/usr/bin/env bash
# tools/layers.sh -- checks src/'s include graph against the layer table of docs/hacking.md.
#
# The table (the fenced block under "## Layers") lists, lowest first, "N name  modules...";
# text in parentheses is a remark, and a line without a number continues the layer above.
# Layer N name is the folder src/NN-name/ (two digits). A module is a .c/.h pair of its
# layer's folder (src/base/util.c, src/base/util.h), named X; an entry written with its
# ".h" (journal_sql.h) is a second header of the module listed just before it; "src/NN-cli/*"
# stands for every file of that folder, the module cli. From the `#include "..."` lines of
# src/*/*.c and src/*/*.h it fails (exit 1, one line a problem) on:
#   - an arrow up: a module including a header of a module in a higher layer;
#   - a cycle: two modules that include each other (also within a layer);
#   - a module of src/ that the table does not list, or a table entry with no file;
#   - a file outside its layer's folder.
# Usage: tools/layers.sh [ROOT] (default: the repository this script is in). -v prints the
# graph's arrows, layer by layer.
set -euo pipefail

verbose=0
if [ "${1:-}" = -v ]; then
        verbose=1
        shift
fi
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

python3 - "$verbose" <<'PY'
import glob, os, re, sys

verbose = sys.argv[1] == "1"
doc = open("docs/hacking.md", encoding="utf-8").read()
m = re.search(r"^## Layers\n.*?^```\n(.*?)^```", doc, re.S | re.M)
if not m:
    sys.exit("layers: no layer table under '## Layers' in docs/hacking.md")

layers = []  # (number, name, text)
for line in m.group(1).splitlines():
    h = re.match(r"^\s*(\d+)\s+(\S+)\s+(.*)$", line)
    if h:
        layers.append([int(h.group(1)), h.group(2), h.group(3)])
    elif line.strip() and layers:
        layers[-1][2] += " " + line.strip()

layer_of = {}
header_of = {}  # a second header -> its module
problems = []
for num, name, text in layers:
    text = re.sub(r"\([^)]*\)", " ", text)
    prev = None
    for word in re.split(r"[,\s]+", text):
        if not word:
            continue
        mod = "cli" if word == "src/cli/*" else re.sub(r"\.[ch]$", "", word)
        if not re.fullmatch(r"[a-z0-9_]+", mod):
            problems.append(f"layer table: '{word}' (layer {num} {name}) is not a module name")
            continue
        if word.endswith(".h") and prev:
            header_of[mod] = prev
            continue
        if mod in layer_of:
            problems.append(f"layer table: {mod} is listed twice")
        layer_of[mod] = (num, name)
        prev = mod

def module(path):
    if path.startswith("src/cli/"):
        return "cli"
    mod = re.sub(r"\.[ch]$", "", os.path.basename(path))
    return header_of.get(mod, mod)

files = sorted(glob.glob("src/**/*.[ch]", recursive=True))
mods = {module(f) for f in files}
for mod in sorted(mods - set(layer_of)):
    problems.append(f"{mod}: a module of src/ that the layer table of docs/hacking.md does not list")
for f in files:
    mod = module(f)
    if mod in layer_of:
        want = "src/%s/" % layer_of[mod][1]
        if not f.startswith(want) or f.count("/") != 2:
            problems.append(f"{f}: module {mod} of layer {layer_of[mod][0]} belongs in {want}")
for mod in sorted(set(layer_of) - mods):
    problems.append(f"layer table: {mod} has no file in src/")

edges = {}  # (from, to) -> first "file:line"
for f in files:
    for n, line in enumerate(open(f, encoding="utf-8"), 1):
        inc = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if not inc:
            continue
        to = module(inc.group(1))
        src = module(f)
        if to != src and to in mods:
            edges.setdefault((src, to), f"{f}:{n}")

for (a, b), where in sorted(edges.items()):
    if a not in layer_of or b not in layer_of:
        continue
    if layer_of[b][0] > layer_of[a][0]:
        problems.append(f"{where}: {a} (layer {layer_of[a][0]} {layer_of[a][1]}) includes {b}.h "
                        f"(layer {layer_of[b][0]} {layer_of[b][1]}): an arrow up")

# Every cycle, of any length: the strongly connected components of the include graph
# (Tarjan's, iterative), each named by one closed walk through its modules.
succ = {}
for (a, b) in edges:
    succ.setdefault(a, []).append(b)
index, low, onstack, stack, comps, counter = {}, {}, set(), [], [], [0]
for root in sorted(mods):
    if root in index:
        continue
    work = [(root, iter(sorted(succ.get(root, []))))]
    index[root] = low[root] = counter[0]; counter[0] += 1
    stack.append(root); onstack.add(root)
    while work:
        v, it = work[-1]
        nxt = next(it, None)
        if nxt is not None:
            if nxt not in index:
                index[nxt] = low[nxt] = counter[0]; counter[0] += 1
                stack.append(nxt); onstack.add(nxt)
                work.append((nxt, iter(sorted(succ.get(nxt, [])))))
            elif nxt in onstack:
                low[v] = min(low[v], index[nxt])
            continue
        work.pop()
        if work:
            low[work[-1][0]] = min(low[work[-1][0]], low[v])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); onstack.discard(w); comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))
for comp in sorted(comps):
    # a closed walk from the smallest module back to itself inside the component
    start, inside = comp[0], set(comp)
    prev, queue, seen = {start: None}, [start], {start}
    path = None
    while queue and path is None:
        v = queue.pop(0)
        for w in sorted(succ.get(v, [])):
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                path.reverse()
                break
            if w in inside and w not in seen:
                seen.add(w); prev[w] = v; queue.append(w)
    walk = path + [start]
    arrows = " -> ".join(walk)
    first = edges[(walk[0], walk[1])]
    problems.append(f"{first}: a cycle: {arrows}")

if verbose:
    for num, name, _ in layers:
        for a in sorted(x for x in layer_of if layer_of[x][0] == num):
            outs = sorted(b for (x, b) in edges if x == a)
            print(f"{num:2} {name:12} {a:14} -> {' '.join(outs)}")

for p in problems:
    print("layers: " + p)
if problems:
    sys.exit(1)
print(f"layers: {len(mods)} modules, {len(edges)} arrows, none up, no cycle")
PY

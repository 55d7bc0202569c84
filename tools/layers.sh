#!/usr/bin/env bash
# tools/layers.sh -- checks src/'s include graph against the layer table of docs/hacking.md.
#
# The table (the fenced block under "## Layers") lists, lowest first, "N name  modules...";
# text in parentheses is a remark, and a line without a number continues the layer above.
# Layer N name is the folder src/NN-name/ (two digits). A module is a .c/.h pair of its
# layer's folder (src/01-base/util.c, src/01-base/util.h), named X; an entry written with its
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
        mod = "cli" if re.fullmatch(r"src/(\d\d-)?cli/\*", word) else re.sub(r"\.[ch]$", "", word)
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
    if re.match(r"src/(\d\d-)?cli/", path):
        return "cli"
    mod = re.sub(r"\.[ch]$", "", os.path.basename(path))
    return header_of.get(mod, mod)

files = sorted(glob.glob("src/*.[ch]") + glob.glob("src/*/*.[ch]"))
mods = {module(f) for f in files}
for mod in sorted(mods - set(layer_of)):
    problems.append(f"{mod}: a module of src/ that the layer table of docs/hacking.md does not list")
for f in files:
    mod = module(f)
    if mod in layer_of:
        want = "src/%02d-%s/" % layer_of[mod]
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
    if (b, a) in edges and a < b:
        problems.append(f"{where} and {edges[(b, a)]}: {a} and {b} include each other: a cycle")

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

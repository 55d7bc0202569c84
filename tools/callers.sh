#!/usr/bin/env bash
# tools/callers.sh -- lists the exported functions of libgauntlet that nothing calls but their
# own file: each one is either dead or should be static.
#
# The exported functions are the global text symbols of the library's objects
# ($BUILD/obj/src/*/*.o, read with nm: build first). A caller is a use of the name, outside
# comments and strings, in any C file of the project's programs other than the one that
# defines it: src/ (in a header, only inside a body: a static inline function), testbed/,
# tests/fixture/, tests/helpers/, tests/hostile/, bench/, tools/, and the tests: the unit
# tests (tests/unit/) and the fuzz harnesses (fuzz/), which test a pure function through its
# header (a parser, a formula). A use through a function pointer counts (the name is written).
# Fails (exit 1) with one line a function, "src/FILE.c: NAME"; exit 0 and nothing printed when
# every one has a caller. -t also lists, after those and without failing, the functions that
# only the tests call ("src/FILE.c: NAME (tests only)"): the library's test seams.
# Usage: tools/callers.sh [-t] [ROOT] (default: the repository this script is in); BUILD as
# make's.
set -euo pipefail

tests_only=0
if [ "${1:-}" = -t ]; then
        tests_only=1
        shift
fi
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
BUILD=${BUILD:-build}

python3 - "$BUILD" "$tests_only" <<'PY'
import glob, os, re, subprocess, sys

build, tests_only = sys.argv[1], sys.argv[2] == "1"
objs = sorted(glob.glob(os.path.join(build, "obj", "src", "*", "*.o")))
if not objs:
    sys.exit(f"callers: no objects under {build}/obj/src: run make first")

defined = {}  # name -> the .c that defines it
out = subprocess.run(["nm", "-A", "--defined-only", "-g"] + objs, check=True, capture_output=True, text=True).stdout
for line in out.splitlines():
    where, _, rest = line.partition(": ")  # "build/obj/src/base/util.o: 0000 T util_x"
    f = rest.split()
    if len(f) != 3 or f[1] != "T":
        continue
    src = os.path.relpath(where, os.path.join(build, "obj"))[:-2] + ".c"
    if os.path.exists(src):  # else an object left from a file since removed
        defined[f[2]] = src

def strip(text):
    # comments, then string and character literals (their contents are not code)
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"'(\\.|[^'\\\n])*'", "''", text)
    return text

def bodies(text):
    # a header's text inside braces at depth >= 1 (inline bodies; declarations stay out)
    out, depth = [], 0
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        out.append(ch if depth > 0 else " ")
    return "".join(out)

files = []
for pat in ("src/*/*.c", "src/*/*.h", "testbed/*.c", "testbed/*.h", "tests/fixture/*.c",
            "tests/helpers/*.c", "tests/hostile/*.c", "bench/*.c", "tools/*.c"):
    files += glob.glob(pat)
tests = glob.glob("tests/unit/*.c") + glob.glob("tests/unit/*.h") + glob.glob("fuzz/*.c") + glob.glob("fuzz/*.h")
files += tests

words = {}  # file -> the set of identifiers used there
for path in sorted(set(files)):
    text = strip(open(path, encoding="utf-8", errors="replace").read())
    if path.endswith(".h"):
        text = bodies(text)
    words[path] = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))

bad, seams = [], []
for name, src in sorted(defined.items(), key=lambda kv: (kv[1], kv[0])):
    users = [path for path, ws in words.items() if path != src and name in ws]
    if not users:
        bad.append(f"{src}: {name}")
    elif all(path in tests for path in users):
        seams.append(f"{src}: {name} (tests only)")
for line in bad + (seams if tests_only else []):
    print(line)
sys.exit(1 if bad else 0)
PY

#!/usr/bin/env bash
# tests/tools/layers.sh -- tools/layers.sh finds what it claims to find, on small trees made
# here: an arrow up, a cycle of three modules within a layer, a file one folder too deep, a
# file directly in src/, a module the table does not list; and passes a clean tree.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT

tree() { # a clean tree: base (a), mid (b c d), top (e)
        rm -rf "$t/r"
        mkdir -p "$t/r/docs" "$t/r/src/base" "$t/r/src/mid" "$t/r/src/top" "$t/r/tools"
        cp "$here/tools/layers.sh" "$t/r/tools/"
        printf '## Layers\n\n```\n 1 base  a\n 2 mid   b, c,\n         d\n 3 top   e\n```\n' >"$t/r/docs/hacking.md"
        for m in base/a mid/b mid/c mid/d top/e; do
                printf '/* %s */\n' "$m" >"$t/r/src/$m.h"
                printf '#include "%s.h"\n' "$m" >"$t/r/src/$m.c"
        done
        echo '#include "base/a.h"' >>"$t/r/src/mid/b.c"
        echo '#include "mid/b.h"' >>"$t/r/src/top/e.c"
}
expect() { # what, pattern: layers.sh fails and says pattern
        local out rc=0
        out=$("$t/r/tools/layers.sh" "$t/r" 2>&1) || rc=$?
        if [ "$rc" -eq 0 ] || ! grep -qE -- "$2" <<<"$out"; then
                echo "FAIL: $1: rc=$rc, wanted /$2/, got:"
                echo "$out"
                exit 1
        fi
        echo "ok: $1"
}

tree
"$t/r/tools/layers.sh" "$t/r" >/dev/null || { echo "FAIL: the clean tree"; "$t/r/tools/layers.sh" "$t/r"; exit 1; }
echo "ok: a clean tree passes"

tree
echo '#include "top/e.h"' >>"$t/r/src/base/a.c"
expect "an arrow up" "a \(layer 1 base\) includes e.h \(layer 3 top\): an arrow up"

tree
echo '#include "mid/c.h"' >>"$t/r/src/mid/b.c"
echo '#include "mid/d.h"' >>"$t/r/src/mid/c.c"
echo '#include "mid/b.h"' >>"$t/r/src/mid/d.h"
expect "a cycle of three in one layer" "a cycle: b -> c -> d -> b"

tree
echo '#include "mid/c.h"' >>"$t/r/src/mid/b.c"
echo '#include "mid/b.h"' >>"$t/r/src/mid/c.c"
expect "two modules including each other" "a cycle: b -> c -> b"

tree
mkdir -p "$t/r/src/mid/deeper"
mv "$t/r/src/mid/d.c" "$t/r/src/mid/deeper/d.c"
expect "a file one folder deeper" "src/mid/deeper/d.c: module d of layer 2 belongs in src/mid/"

tree
printf '/* x */\n' >"$t/r/src/x.c"
expect "a file directly in src/" "x: a module of src/ that the layer table"

tree
mv "$t/r/src/top/e.c" "$t/r/src/base/e.c"
expect "a file in another layer's folder" "src/base/e.c: module e of layer 3 belongs in src/top/"

tree
rm "$t/r/src/mid/d.c" "$t/r/src/mid/d.h"
expect "a table entry with no file" "layer table: d has no file in src/"

#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# emit.sh -- `gauntlet emit` and `gauntlet report` on a journal made through the C API
# (test_emit --make-journal): the unit passes systemd-analyze verify (a workdir with "."
# and ".." normalised first), the script hands
# the server its argv and env byte for byte, --cell/--port/no-pass/not-a-journal behave.
set -eu
BUILD_DIR="$SRCDIR/$BUILD"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$SRCDIR/tests/assert.sh"

"$BUILD_DIR/tests/test_emit" --make-journal "$tmp"
j="$tmp/j.db"

# systemd unit: verified by systemd itself when it is installed.
"$GAUNTLET" emit systemd "$j" > "$tmp/gauntlet-test.service"
grep -q '^ExecStart="'"$tmp"'/stub" "--port" "45678" ' "$tmp/gauntlet-test.service" || fail "ExecStart"
grep -q '^# Cell aaaa000000000001: x=a (the best passing cell)\.$' "$tmp/gauntlet-test.service" || fail "header"
grep -q '^WorkingDirectory='"$tmp"'$' "$tmp/gauntlet-test.service" || fail "WorkingDirectory"
grep -q '^TimeoutStartSec=1200$' "$tmp/gauntlet-test.service" || fail "TimeoutStartSec"
if command -v systemd-analyze >/dev/null; then
        systemd-analyze verify "$tmp/gauntlet-test.service" || fail "systemd-analyze verify"
else
        echo "systemd-analyze not installed: unit not verified"
fi

# A workdir with "." and ".." (systemd refuses them in WorkingDirectory=): normalised.
cp "$j" "$tmp/dots.db"
sqlite3 "$tmp/dots.db" "UPDATE sweeps SET workdir = '$tmp/./missing/..//'"
"$GAUNTLET" emit systemd "$tmp/dots.db" > "$tmp/dots.service" || fail "emit with a dotted workdir"
grep -q '^WorkingDirectory='"$tmp"'$' "$tmp/dots.service" || { grep WorkingDirectory "$tmp/dots.service"; fail "dotted WorkingDirectory not normalised"; }
if command -v systemd-analyze >/dev/null; then
        systemd-analyze verify "$tmp/dots.service" || fail "systemd-analyze verify (dotted workdir)"
fi

# Launch script: syntax, then run it (from another folder) against the stub.
"$GAUNTLET" emit script "$j" > "$tmp/run.sh"
sh -n "$tmp/run.sh" || fail "sh -n"
(cd / && env -u SECRET_TOKEN sh "$tmp/run.sh") || fail "script run"
cmp "$tmp/stub.args" "$tmp/expected.args" || fail "argv not byte-exact"
cmp "$tmp/stub.env" "$tmp/expected.env" || fail "env not byte-exact"
[ "$(cat "$tmp/stub.cwd")" = "$tmp" ] || fail "working directory"

# --port when the matrix fixed none; --cell by unique prefix, for a failing cell too.
"$GAUNTLET" emit script "$j" --port 5555 > "$tmp/run2.sh"
sh "$tmp/run2.sh"
tr '\0' '\n' < "$tmp/stub.args" | sed -n 2p | grep -qx 5555 || fail "--port"
"$GAUNTLET" emit systemd "$j" --cell bbbb --name my-llm > "$tmp/b.service" || fail "--cell prefix"
grep -q '^# Cell bbbb000000000003: x=c (chosen with --cell)\.$' "$tmp/b.service" || fail "--cell header"
grep -q '^Description=my-llm: ' "$tmp/b.service" || fail "--name"

set +e
"$GAUNTLET" emit systemd "$j" --cell aaaa > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "ambiguous" "$tmp/err" || fail "ambiguous --cell: rc=$rc $(cat "$tmp/err")"
"$GAUNTLET" emit systemd "$j" --cell cccc > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "no cell 'cccc'" "$tmp/err" || fail "unknown --cell: rc=$rc"
"$GAUNTLET" emit systemd "$tmp/nopass.db" > "$tmp/out" 2> "$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q "no cell passed" "$tmp/err" && [ ! -s "$tmp/out" ] || fail "no pass: rc=$rc"
"$GAUNTLET" emit systemd "$tmp/expected.args" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "not a gauntlet journal" "$tmp/err" || fail "not a journal: rc=$rc $(cat "$tmp/err")"
"$GAUNTLET" report "$tmp/missing.db" > /dev/null 2> "$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q "^gauntlet: cannot open journal" "$tmp/err" || fail "missing journal: rc=$rc"
"$GAUNTLET" emit nonsense "$j" > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "unknown kind: rc=$rc"
"$GAUNTLET" report --format yaml "$j" > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "unknown format: rc=$rc"
set -e

# Reports: JSON contract fields and masking, text and Markdown.
"$GAUNTLET" report --format json "$j" > "$tmp/r.json"
if command -v jq >/dev/null; then
        [ "$(jq -r .best "$tmp/r.json")" = aaaa000000000001 ] || fail "json best"
        [ "$(jq -r '.cells[0].env.SECRET_TOKEN' "$tmp/r.json")" = '***' ] || fail "json env mask"
        [ "$(jq -r '.cells[0].command[13]' "$tmp/r.json")" = '***' ] || fail "json argv mask"
        [ "$(jq -r '.cells[0].command[2]' "$tmp/r.json")" = 45678 ] || fail "json port"
        [ "$(jq -r '.cells[1].verdict + "/" + .cells[1].cause' "$tmp/r.json")" = garbage/repeat ] || fail "json verdict"
        jq -e '.gauntlet and .engine and (.host|type=="object") and (.cells|length==3)' "$tmp/r.json" > /dev/null || fail "json shape"
fi
! grep -q 'sk-1' "$tmp/r.json" || fail "secret in json"
"$GAUNTLET" report "$j" > "$tmp/r.txt"
grep -q '^best: aaaa000000000001 x=a, 99.5 tok/s @1$' "$tmp/r.txt" || fail "text best"
grep -q '^3 cells: 1 pass, 1 garbage, 1 crash$' "$tmp/r.txt" || fail "text summary"
"$GAUNTLET" report --format markdown "$j" > "$tmp/r.md"
grep -q '^| \*\*best\*\* | `a` | \*\*pass\*\* | 99.5 tok/s @1 | `aaaa000000000001` |$' "$tmp/r.md" || fail "markdown winner"
echo "emit.sh: all good"

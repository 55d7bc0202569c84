#!/usr/bin/env bash
# tier: slurm (tests/run slurm)
# slurm-preflight.sh -- what needs no Slurm at all: a Slurm sweep where srun cannot be found
# stops before any cell with one line naming the matrix key (exit 2), and a bad --launcher
# is a usage error.
. "$SRCDIR/tests/lib.sh"

mkdir "$tmp/empty"
cat >"$tmp/m.yaml" <<YAML
engine: testbed
launcher: slurm
YAML
set +e
PATH="$tmp/empty" "$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>"$tmp/err"
status=$?
set -e
[ "$status" -eq 2 ] || { cat "$tmp/out" "$tmp/err"; fail "no srun: exit $status, want 2"; }
[ "$(cat "$tmp/err")" = "gauntlet: $tmp/m.yaml:2: launcher slurm: cannot start 'srun': No such file or directory (not on PATH)" ] ||
        fail "no srun: got '$(cat "$tmp/err")'"
# the same from the command line names the file alone
printf 'engine: testbed\n' >"$tmp/local.yaml"
set +e
PATH="$tmp/empty" "$GAUNTLET" run "$tmp/local.yaml" --launcher slurm --journal "$tmp/j2.db" >"$tmp/out" 2>"$tmp/err"
status=$?
set -e
[ "$status" -eq 2 ] || fail "--launcher slurm, no srun: exit $status, want 2"
grep -qxF "gauntlet: $tmp/local.yaml: launcher slurm: cannot start 'srun': No such file or directory (not on PATH)" "$tmp/err" ||
        fail "--launcher slurm, no srun: got '$(cat "$tmp/err")'"
set +e
"$GAUNTLET" run "$tmp/local.yaml" --launcher pbs >"$tmp/out" 2>"$tmp/err"
status=$?
set -e
[ "$status" -eq 2 ] || fail "--launcher pbs: exit $status, want 2"
grep -q "unknown launcher 'pbs' (local or slurm)" "$tmp/err" || fail "--launcher pbs: got '$(cat "$tmp/err")'"
echo "slurm-preflight.sh: all good"

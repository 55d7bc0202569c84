#!/usr/bin/env bash
# tools/measure-slurm.sh -- the figures of docs/slurm.md: one testbed sweep of 12 cells, each
# loading for LOAD seconds (default 5) as a real engine's load dominates a cell, run here,
# through Slurm one job at a time, and through Slurm with max_parallel 4 and 12, on the
# one-node Slurm the tests start (tests/slurm-lib.sh: root, Debian's slurmctld, slurmd,
# slurm-client, munge). Prints each run's wall time, the jobs it submitted, its verdicts
# (which must be the same in every run: --no-infer, so that each launches every cell) and
# what squeue shows afterwards.
#
#   make && tools/measure-slurm.sh [LOAD]
set -euo pipefail
cd "$(dirname "$0")/.."
export SRCDIR=$PWD
BUILD=${BUILD:-build}
export GAUNTLET=$PWD/$BUILD/bin/gauntlet
[ -x "$GAUNTLET" ] || { echo "measure-slurm: build first (make)" >&2; exit 1; }
. tests/lib.sh
. tests/slurm-lib.sh
load=${1:-5}
cpus=16
slurm_start "$cpus"

matrix() { # max_parallel
        cat <<YAML
engine: testbed
args: [--device-arch, sm_120, --mem-budget, 24M, --threads, "1", --slow-load, "$load"]
startup_timeout: 5m
request_timeout: 60s
stop_timeout: 5s
launcher: slurm
slurm: {max_parallel: $1, gpus_per_cell: 0}
axes:
  moe:
    flag: --moe-backend
    values: [nvfp4, reference, tcgen05, shuffled, nvfp4-swizzled, fp16acc]
  gemm:
    flag: --gemm-backend
    values: [nvfp4, reference]
checks: default
bench: {concurrency: [1], input_tokens: 8, output_tokens: 32, requests: 8, warmup: 0}
YAML
}

run() { # name launcher max_parallel
        matrix "$3" >"$tmp/$1.yaml"
        local before after t0 t1
        before=$(slurm_jobs | grep -c '|gauntlet-' || true)
        t0=$(date +%s.%N)
        "$GAUNTLET" run "$tmp/$1.yaml" --no-infer --launcher "$2" --journal "$tmp/$1.db" >"$tmp/$1.out" 2>&1 || [ $? -eq 1 ] ||
                { cat "$tmp/$1.out"; fail "$1 failed"; }
        t1=$(date +%s.%N)
        after=$(slurm_jobs | grep -c '|gauntlet-' || true)
        "$GAUNTLET" report --format json "$tmp/$1.db" | jq -r '.cells[] | "\(.axes.moe)/\(.axes.gemm) \(.verdict) \(.cause // "-")"' |
                sort >"$tmp/$1.verdicts"
        printf '%-22s %7.1f s  %2d jobs  %s  squeue after: %s\n' "$1" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" \
                "$((after - before))" "$(grep -o '^12 cells: .*;' "$tmp/$1.out" || grep '^12 cells' "$tmp/$1.out")" \
                "$(slurm_active | wc -l) jobs"
}

echo "12 cells, --slow-load $load s each; one node, $cpus CPUs declared ($(nproc) real)"
run local local 1
run slurm-one-at-a-time slurm 1
run slurm-max-parallel-4 slurm 4
run slurm-max-parallel-12 slurm 12
for r in slurm-one-at-a-time slurm-max-parallel-4 slurm-max-parallel-12; do
        diff -q "$tmp/local.verdicts" "$tmp/$r.verdicts" >/dev/null || { diff "$tmp/local.verdicts" "$tmp/$r.verdicts"; fail "$r: verdicts differ"; }
done
echo "verdicts: the same in all four runs"
sed 's/^/  /' "$tmp/local.verdicts"

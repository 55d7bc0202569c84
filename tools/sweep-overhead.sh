#!/usr/bin/env bash
# sweep-overhead.sh -- where a sweep's wall time goes: the servers' own time (start-up,
# checks, eval and bench requests) and gauntlet's own (everything else), phase by phase, from the
# per-phase times the journal keeps. A measurement, not a test (docs/supervisor.md
# "Overhead" holds the figures).
#
#   tools/sweep-overhead.sh [-n RUNS] MATRIX [gauntlet run options...]
#
# Each run sweeps MATRIX into a fresh journal (so every cell is launched), timing the whole
# `gauntlet run` from outside. build/bin (or $BUILD/bin) goes first on PATH, so a matrix
# may name gauntlet-fixture or gauntlet-testbed bare; GAUNTLET picks another gauntlet.
# tools/overhead-helpers.yaml is the 12-cell sweep of a server whose helper ignores
# SIGTERM; examples/demo.yaml is the demo.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-build}
export PATH="$here/$build/bin:$PATH"
gauntlet=${GAUNTLET:-$here/$build/bin/gauntlet}
runs=1
if [ "${1:-}" = -n ]; then
        runs=$2
        shift 2
fi
[ $# -ge 1 ] || { echo "usage: $0 [-n RUNS] MATRIX [gauntlet run options...]" >&2; exit 2; }
matrix=$1
shift
command -v sqlite3 >/dev/null || { echo "sweep-overhead: sqlite3 is needed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

method=$("$gauntlet" doctor --format json 2>/dev/null | sed -n 's/.*"method": "\([a-z]*\)".*/\1/p' | head -n 1)
echo "matrix $matrix; $runs run(s); gauntlet $gauntlet; containment ${method:-unknown}$([ -n "${GAUNTLET_NO_CGROUP:-}" ] && echo " (GAUNTLET_NO_CGROUP=$GAUNTLET_NO_CGROUP)")"
for r in $(seq "$runs"); do
        j="$tmp/run$r.db"
        t0=$(date +%s%N)
        set +e
        "$gauntlet" run "$matrix" --journal "$j" "$@" >"$tmp/out$r" 2>"$tmp/err$r"
        status=$?
        set -e
        t1=$(date +%s%N)
        [ "$status" -le 1 ] || { cat "$tmp/out$r" "$tmp/err$r" >&2; echo "sweep-overhead: gauntlet run exited $status" >&2; exit 1; }
        wall_us=$(((t1 - t0) / 1000))
        # One row of sums over the attempts (microseconds): the phases, the time inside an
        # attempt outside its phases, the time from the first attempt's start to the last
        # one's end. The eval's phase where the journal has one (schema 3).
        ev=0
        sqlite3 "$j" "SELECT eval_us FROM attempts LIMIT 0" 2>/dev/null && ev="coalesce(eval_us, 0)"
        IFS='|' read -r n launch ready checks eval bench stop inside span <<<"$(sqlite3 "$j" "
                SELECT count(*), sum(coalesce(launch_us, 0)), sum(coalesce(ready_us, 0)),
                       sum(coalesce(checks_us, 0)), sum($ev), sum(coalesce(bench_us, 0)), sum(coalesce(stop_us, 0)),
                       sum(ended_wall - started_wall - coalesce(launch_us, 0) - coalesce(ready_us, 0)
                           - coalesce(checks_us, 0) - $ev - coalesce(bench_us, 0) - coalesce(stop_us, 0)),
                       max(ended_wall) - min(started_wall)
                FROM attempts WHERE ended_wall IS NOT NULL")"
        between=$((span - launch - ready - checks - eval - bench - stop - inside))
        outside=$((wall_us - span))
        servers=$((ready + checks + eval + bench))
        own=$((wall_us - servers))
        summary=$(grep -E '^[0-9]+ cells:' "$tmp/out$r" || echo "(no summary)")
        awk -v wall="$wall_us" -v n="$n" -v launch="$launch" -v ready="$ready" -v checks="$checks" -v eval="$eval" \
                -v bench="$bench" -v stop="$stop" -v inside="$inside" -v between="$between" \
                -v outside="$outside" -v servers="$servers" -v own="$own" -v run="$r" -v summary="$summary" '
                function row(name, us) {
                        printf "  %-58s %9.1f ms %8.2f ms/cell %6.2f%%\n", name, us / 1000, n ? us / 1000 / n : 0, 100 * us / wall
                }
                BEGIN {
                        printf "run %d: %s; %d attempts; wall %.2f s\n", run, summary, n, wall / 1e6
                        print "  the servers'"'"' own time:"
                        row("start-up: spawn to ready seen (or to its death)", ready)
                        row("checks", checks)
                        row("eval", eval)
                        row("bench requests", bench)
                        row("all of it", servers)
                        print "  gauntlet'"'"'s own time:"
                        row("launch: cgroup, spawn and exec", launch)
                        row("stop: SIGTERM, waits, SIGKILL, cgroup or /proc confirmation", stop)
                        row("in an attempt, between its phases (port, journal, diagnosis)", inside)
                        row("between attempts (journal, progress line with the best)", between)
                        row("before the first attempt and after the last", outside)
                        row("all of it: wall minus the servers'"'"' own time", own)
                }'
done

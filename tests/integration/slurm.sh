#!/usr/bin/env bash
# tier: slurm (tests/run slurm)
# slurm.sh -- the testbed swept through a real Slurm (one node on localhost, started here,
# tests/slurm-lib.sh): every cell is a Slurm job, the verdicts are those of a local run of
# the same matrix, the cells run side by side up to slurm.max_parallel, the logs come back
# through srun, and nothing of the run is left in the queue. Skipped (77) when not root or
# without Debian's slurmctld, slurmd, slurm-client and munge.
. "$SRCDIR/tests/lib.sh"
. "$SRCDIR/tests/slurm-lib.sh"

slurm_start 8

# Six cells of the demo's backend hunt (docs/testbed.md), each loading for 2 s first, as a
# real engine's load dominates a cell: pass, pass, crash/arch, crash/oom, garbage, and the
# fp16 overflow.
cat >"$tmp/m.yaml" <<YAML
engine: testbed
args: [--device-arch, sm_120, --mem-budget, 24M, --threads, "1", --slow-load, "2"]
startup_timeout: 60s
request_timeout: 30s
stop_timeout: 5s
launcher: slurm
slurm: {max_parallel: 3, time: 10m, gpus_per_cell: 0}
axes:
  moe:
    flag: --moe-backend
    values: [nvfp4, reference, tcgen05, shuffled, nvfp4-swizzled, fp16acc]
checks: default
bench: {concurrency: [1], input_tokens: 8, output_tokens: 16, requests: 4, warmup: 0}
YAML

# The reference: the same matrix run here.
"$GAUNTLET" run "$tmp/m.yaml" --launcher local --journal "$tmp/local.db" >"$tmp/local.out" 2>&1 ||
        [ $? -eq 1 ] || { cat "$tmp/local.out"; fail "the local run failed"; }
"$GAUNTLET" report --format json "$tmp/local.db" >"$tmp/local.json"
jq -r '.cells[] | "\(.axes.moe) \(.verdict) \(.cause // "-")"' "$tmp/local.json" | sort >"$tmp/local.verdicts"
[ "$(wc -l <"$tmp/local.verdicts")" -eq 6 ] || fail "the local run settled $(wc -l <"$tmp/local.verdicts") cells, want 6"

# Through Slurm. SLURM_JOB_ID is set as inside an allocation: every cell is still a job of
# its own (gauntlet keeps the variable from srun), never a step of job 424242.
[ -z "$(slurm_jobs)" ] || fail "the new cluster already has jobs: $(slurm_jobs)"
start=$(date +%s.%N)
SLURM_JOB_ID=424242 "$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/slurm.db" >"$tmp/slurm.out" 2>"$tmp/slurm.err" ||
        [ $? -eq 1 ] || { cat "$tmp/slurm.out" "$tmp/slurm.err"; fail "the Slurm run failed"; }
end=$(date +%s.%N)
cat "$tmp/slurm.out" "$tmp/slurm.err" >&2
grep -q "3 cells side by side, each a Slurm job" "$tmp/slurm.err" || fail "the cells did not run side by side"
"$GAUNTLET" report --format json "$tmp/slurm.db" >"$tmp/slurm.json"
jq -r '.cells[] | "\(.axes.moe) \(.verdict) \(.cause // "-")"' "$tmp/slurm.json" | sort >"$tmp/slurm.verdicts"
diff "$tmp/local.verdicts" "$tmp/slurm.verdicts" >&2 || fail "the Slurm run's verdicts differ from the local run's"
grep -qx "nvfp4 pass -" "$tmp/slurm.verdicts" || fail "no passing cell: $(cat "$tmp/slurm.verdicts")"
grep -qx "tcgen05 crash arch" "$tmp/slurm.verdicts" || fail "tcgen05 did not crash/arch"
# the evidence is the engine's own line, as in the local run, never srun's
[ "$(jq -r '.cells[] | select(.axes.moe == "tcgen05") | .evidence' "$tmp/slurm.json")" = \
        "$(jq -r '.cells[] | select(.axes.moe == "tcgen05") | .evidence' "$tmp/local.json")" ] ||
        fail "tcgen05's evidence differs from the local run's"
# the passing cells were benchmarked, through their node's address
[ "$(jq '[.cells[] | select(.verdict == "pass") | .bench[0].output_tokens_per_s > 0] | all' "$tmp/slurm.json")" = true ] ||
        fail "a passing cell has no bench figures"

# One Slurm job per cell, named by the attempt's token; each log came back through srun and
# says where its job ran.
jobs=$(slurm_jobs | grep -c '|gauntlet-[0-9a-f]\{32\}|' || true)
[ "$jobs" -eq 6 ] || fail "$jobs Slurm jobs named gauntlet-TOKEN, want 6: $(slurm_jobs)"
for log in "$tmp"/slurm/*/*.log; do
        grep -q '^\[gauntlet: Slurm job [0-9]* runs on gauntlet (address 127.0.0.1)' "$log" || fail "$log: no placement note"
        grep -q '^gauntlet-testbed: loading ' "$log" || fail "$log: the server's output did not come back"
done
# Side by side: the attempts' intervals in the journal overlap, up to 3 at once, never more.
sqlite3 "$tmp/slurm.db" "SELECT started_wall, 1 FROM attempts UNION ALL SELECT ended_wall, -1 FROM attempts ORDER BY 1, 2" |
        awk -F'|' '{ n += $2; if (n > max) max = n } END { print max }' >"$tmp/overlap"
[ "$(cat "$tmp/overlap")" -ge 2 ] || fail "the cells never ran at once (at most $(cat "$tmp/overlap"))"
[ "$(cat "$tmp/overlap")" -le 3 ] || fail "$(cat "$tmp/overlap") cells ran at once, more than max_parallel 3"
# Nothing left in the queue: every job ended, no process of the cells is left.
[ -z "$(slurm_active)" ] || fail "jobs left in the queue: $(slurm_active)"
[ -z "$(pgrep -f -- "--journal $tmp/slurm.db")" ] || fail "a gauntlet worker is left"
echo "slurm run: 6 cells, 6 jobs, $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s, up to $(cat "$tmp/overlap") at once" >&2

# Resume: every cell is in the journal, no job is submitted.
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/slurm.db" >"$tmp/again.out" 2>&1 || [ $? -eq 1 ] ||
        { cat "$tmp/again.out"; fail "the resume failed"; }
[ "$(grep -c '(journal)' "$tmp/again.out")" -eq 6 ] || { cat "$tmp/again.out"; fail "the resume ran cells again"; }
[ "$(slurm_jobs | grep -c '|gauntlet-' || true)" -eq 6 ] || fail "the resume submitted jobs: $(slurm_jobs)"

# Ctrl-C while three workers' jobs load (for 60 s: none ends by itself meanwhile): every
# job of the run is cancelled, exit 130.
sed 's/--slow-load, "2"/--slow-load, "60"/' "$tmp/m.yaml" >"$tmp/int.yaml"
"$GAUNTLET" run "$tmp/int.yaml" --journal "$tmp/int.db" >"$tmp/int.out" 2>&1 &
gpid=$!
echo "$gpid" >"$tmp/pids-int"
for _ in $(seq 300); do
        [ "$(grep -l '^\[gauntlet: Slurm job [0-9]* runs on' "$tmp"/int/*/*.log 2>/dev/null | wc -l)" -ge 3 ] && break
        sleep 0.1
done
[ "$(slurm_active | grep -c '|gauntlet-' || true)" -eq 3 ] || fail "3 jobs should be running: $(slurm_active)"
kill -INT "$gpid"
set +e
wait "$gpid"
status=$?
set -e
[ "$status" -eq 130 ] || { cat "$tmp/int.out"; fail "SIGINT: exit $status, want 130"; }
[ -z "$(slurm_active)" ] || fail "SIGINT left jobs in the queue: $(slurm_active)"
expect_none_alive "SIGINT left gauntlet processes"
echo "slurm.sh: all good"

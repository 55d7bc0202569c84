#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# infer.sh -- an arch crash pinned on one axis value decides the other cells with that
# value: they are not launched (skipped/inferred, the deciding cell named); a crash that
# nothing pins yet decides nothing; --no-infer runs them; a resume keeps them decided.
. "$SRCDIR/tests/lib.sh"
arch='--die-at-load, --log, "RuntimeError: CUDA error: no kernel image is available for execution on the device"'
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --host, "{host}", --pid-file, "$tmp/pids-{port}", --launch-log, "$tmp/launches"]
startup_timeout: 5s
stop_timeout: 1s
axes:
  moe:
    values:
      - {name: fine}
      - {name: sm100only, args: [$arch]}
  gemm:
    values:
      - {name: g1}
      - {name: g2, env: {G: "2"}}
      - {name: g3, env: {G: "3"}}
YAML
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "the sweep failed"; }
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json"
v() { jq -r --arg m "$1" --arg g "$2" '.cells[] | select(.axes.moe == $m and .axes.gemm == $g) | "\(.verdict)/\(.cause)"' "$tmp/r.json"; }
[ "$(v fine g1)" = pass/null ] && [ "$(v fine g2)" = pass/null ] && [ "$(v fine g3)" = pass/null ] || fail "the fine cells: $(cat "$tmp/out")"
[ "$(v sm100only g1)" = crash/arch ] || fail "the deciding crash: $(v sm100only g1)"
[ "$(v sm100only g2)" = skipped/inferred ] && [ "$(v sm100only g3)" = skipped/inferred ] ||
        fail "not inferred: $(v sm100only g2) $(v sm100only g3)"
decider=$(jq -r '.cells[] | select(.axes.moe == "sm100only" and .axes.gemm == "g1") | .id[0:8]' "$tmp/r.json")
jq -r '.cells[] | select(.verdict == "skipped") | .evidence' "$tmp/r.json" | grep "arch crash of moe=sm100only decided it (cell $decider)" >/dev/null ||
        fail "evidence: $(jq -c '[.cells[] | .evidence]' "$tmp/r.json")"
[ "$(launch_count "$tmp/launches")" -eq 4 ] || fail "$(launch_count "$tmp/launches") launches, want 4 (2 cells spared)"
grep -q "skipped/inferred" "$tmp/out" || fail "the run's lines do not say so"
# a resume keeps them decided, launching nothing
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out2" 2>&1 || true
[ "$(launch_count "$tmp/launches")" -eq 4 ] || fail "the resume launched the inferred cells"
# --no-infer runs them
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" --no-infer >"$tmp/out3" 2>&1 || true
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json"
[ "$(v sm100only g2)" = crash/arch ] && [ "$(v sm100only g3)" = crash/arch ] || fail "--no-infer did not run them: $(cat "$tmp/out3")"

# a crash with no cell that ran fine one value apart, and no spread: no blame, every cell runs
cat >"$tmp/two.yaml" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --host, "{host}", --pid-file, "$tmp/pids2-{port}", --launch-log, "$tmp/launches2"]
startup_timeout: 5s
stop_timeout: 1s
axes:
  moe:
    values:
      - {name: sm100only, args: [$arch]}
      - {name: fine}
  gemm:
    values:
      - {name: g1}
      - {name: g2, env: {G: "2"}}
YAML
"$GAUNTLET" run "$tmp/two.yaml" --journal "$tmp/two.db" >"$tmp/out4" 2>&1 || true
! grep -q "inferred" "$tmp/out4" || fail "a crash that pins nothing skipped a cell: $(cat "$tmp/out4")"
[ "$(launch_count "$tmp/launches2")" -eq 4 ] || fail "not every cell ran"
expect_none_alive "processes left"
echo "infer.sh: all good"

#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# search.sh -- strategy: search against the fixture server, on a 3 x 3 x 4 space whose
# speeds are set by the token delay (40, 20 and 5 ms: 2x and 4x apart, far beyond the noise), one
# value that crashes with an arch error and one that answers garbage:
#   - within budget: {launches: 8} it launches at most 8 cells, names the fast working cell
#     best, and accounts for every other cell (pruned with a reason, or inferred);
#   - the progress lines say "launch N (budget 8)"; every report has the search's line;
#   - interrupted during a launch, it resumes with that very cell, and the report's "next"
#     named it (decisions come from the journal);
#   - a larger budget continues the same search: no cell launched twice, but to measure
#     again a cell that served (its progress line says so, the report pools its figures);
#   - --no-prune launches every cell the arch rule did not decide.
. "$SRCDIR/tests/lib.sh"
arch='--die-at-load, --log, "RuntimeError: CUDA error: no kernel image is available for execution on the device"'
matrix() { # file budget [load-time]
        cat >"$1" <<YAML
engine: generic
command: [$FIXTURE, --port, "{port}", --host, "{host}", --pid-file, "$tmp/pids-{port}", --launch-log, "$tmp/launches", --load-time, "${3:-0}"]
startup_timeout: 10s
stop_timeout: 2s
axes:
  delay:
    values:
      - {name: d40, args: [--token-delay-ms, "40"]}
      - {name: d20, args: [--token-delay-ms, "20"]}
      - {name: d5, args: [--token-delay-ms, "5"]}
  kind:
    values:
      - {name: garbage, args: [--answer, "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"]}
      - {name: ok}
      - {name: sm100, args: [$arch]}
  x:
    flag: --model
    values: [m1, m2, m3, m4]
strategy: search
budget: {launches: $2}
checks: default
bench: {concurrency: [1], input_tokens: 8, output_tokens: 16, requests: 2}
objective: output_tokens_per_s@1
emit: []
YAML
}
launches() { launch_count "$tmp/launches"; }

# --- a budget of 8 ----------------------------------------------------------------------
matrix "$tmp/m.yaml" 8
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>&1 || { cat "$tmp/out"; fail "the search found nothing"; }
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json"
n=$(launches)
[ "$n" -le 8 ] && [ "$n" -ge 3 ] || fail "$n launches with a budget of 8: $(cat "$tmp/out")"
[ "$(jq -r .search.launches "$tmp/r.json")" = "$n" ] || fail "the report counts $(jq .search.launches "$tmp/r.json") launches, the servers $n"
# a cell launched more than once was measured again: it had served, and its line says so
again() { # report output
        [ "$(jq '[.cells[] | .launches // 0] | add' "$1")" = "$(jq .search.launches "$1")" ] || fail "the cells' launches do not add up"
        [ "$(jq '[.cells[] | select((.launches // 0) > 1 and .verdict != "pass")] | length' "$1")" = 0 ] ||
                fail "a cell launched again that had not served"
        [ "$(jq '[.cells[] | select((.launches // 0) > 1)] | length' "$1")" = "$(jq '[.cells[] | select(.pooled != null)] | length' "$1")" ] ||
                fail "a cell measured again without its pooled figure"
        [ "$(jq '[.cells[] | (.launches // 1) - 1] | add' "$1")" = "$(grep -c 'measured again\]' "$2")" ] ||
                fail "the progress lines do not say which launches measured a cell again"
        # each launch keeps its own log: the ones measuring again do not overwrite the first
        [ "$(find "$tmp/j" -name '*.measure*.log' | wc -l)" = "$(jq '[.cells[] | (.launches // 1) - 1] | add' "$1")" ] ||
                fail "the launches measuring a cell again have no logs of their own: $(find "$tmp/j" -name '*.log' | head -20)"
}
again "$tmp/r.json" "$tmp/out"
grep -q '^\[launch 1 (budget 8)\]' "$tmp/out" || fail "no 'launch 1 (budget 8)' line: $(head -3 "$tmp/out")"
grep -qE "^\[launch $n \(budget 8\)(, measured again)?\]" "$tmp/out" || fail "no 'launch $n (budget 8)' line"
best=$(jq -r .best "$tmp/r.json")
[ "$(jq -r --arg b "$best" '.cells[] | select(.id == $b) | "\(.axes.delay) \(.axes.kind)"' "$tmp/r.json")" = "d5 ok" ] ||
        fail "best: $(jq -c --arg b "$best" '.cells[] | select(.id == $b) | .axes' "$tmp/r.json")"
# the best is the model's named cell, launched and serving, with its estimate
[ "$(jq -r .search.named.cell "$tmp/r.json")" = "$best" ] || fail "search.named: $(jq -c .search.named "$tmp/r.json"), best $best"
[ "$(jq -r --arg b "$best" '.cells[] | select(.id == $b) | .verdict' "$tmp/r.json")" = pass ] || fail "the named best did not pass"
jq -e '.search.named.estimate > 0' "$tmp/r.json" >/dev/null || fail "no estimate for the named best"
# every cell accounted for: none "not run"; the unlaunched skipped, pruned or inferred, with a reason
[ "$(jq '.summary["not run"]' "$tmp/r.json")" = 0 ] || fail "cells left unaccounted: $(jq -c .summary "$tmp/r.json")"
bad=$(jq -r '.cells[] | select(.verdict == "skipped" and ((.cause != "pruned" and .cause != "inferred") or (.evidence // "") == "")) | .id' "$tmp/r.json")
[ -z "$bad" ] || fail "skipped cells without a cause or reason: $bad"
pruned=$(jq '[.cells[] | select(.cause == "pruned")] | length' "$tmp/r.json")
[ "$pruned" -gt 0 ] && [ "$(jq -r .search.pruned "$tmp/r.json")" = "$pruned" ] || fail "pruned: $pruned, search.pruned $(jq .search.pruned "$tmp/r.json")"
jq -r '.cells[] | select(.cause == "pruned") | .evidence' "$tmp/r.json" | grep -v '^budget spent; predicted' >/dev/null &&
        fail "a pruned cell's reason: $(jq -r '.cells[] | select(.cause == "pruned") | .evidence' "$tmp/r.json" | grep -v '^budget spent; predicted' | head -1)"
[ "$(jq '[.cells[] | select(.cause == "pruned") | .prediction.p_feasible | numbers] | length' "$tmp/r.json")" = "$pruned" ] ||
        fail "a pruned cell without its prediction"
[ "$(jq -r .search.stopped "$tmp/r.json")" = budget ] && [ "$(jq -r '.search.next | length' "$tmp/r.json")" = 16 ] ||
        fail "the search's stop and next: $(jq -c '.search | {stopped, next}' "$tmp/r.json")"
[ "$(jq '.search.best_so_far | length' "$tmp/r.json")" = "$(jq .search.launched "$tmp/r.json")" ] || fail "best_so_far: $(jq -c .search.best_so_far "$tmp/r.json")"
# the sm100 crashes are crash/arch, the garbage ones garbage: whatever was launched of them
jq -r '.cells[] | select(.axes.kind == "sm100" and .verdict != "skipped") | "\(.verdict)/\(.cause)"' "$tmp/r.json" | grep -v '^crash/arch$' &&
        fail "an sm100 cell that did not crash with arch"
jq -r '.cells[] | select(.axes.kind == "garbage" and .verdict != "skipped") | .verdict' "$tmp/r.json" | grep -v '^garbage$' &&
        fail "a garbage cell that did not answer garbage"
for f in text markdown html; do
        "$GAUNTLET" report --format $f "$tmp/j.db" >"$tmp/report.$f"
done
for f in text markdown; do
        grep -qiE "search: $(jq .search.launched "$tmp/r.json") of 36 cells launched \(budget 8\), ($n launches \([0-9]+ measuring a close cell again\), )?$pruned pruned" "$tmp/report.$f" ||
                fail "the $f report has no search line: $(tail -3 "$tmp/report.$f")"
done
grep -q 'id="search"' "$tmp/report.html" || fail "the HTML report has no search section"

# --- a larger budget continues it: nothing launched twice but to measure it again ----------
matrix "$tmp/m.yaml" 12
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out2" 2>&1 || { cat "$tmp/out2"; fail "the continued search failed"; }
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r2.json"
n2=$(launches)
[ "$n2" -gt "$n" ] && [ "$n2" -le 12 ] || fail "$n2 launches in all after a budget of 12 (first run: $n)"
[ "$(jq -r .search.launches "$tmp/r2.json")" = "$n2" ] || fail "the report counts $(jq .search.launches "$tmp/r2.json") launches, the servers $n2"
cat "$tmp/out" "$tmp/out2" >"$tmp/out12"
again "$tmp/r2.json" "$tmp/out12"
grep -qE "^\[launch $((n + 1)) \(budget 12\)(, measured again)?\]" "$tmp/out2" || fail "the continued search does not count on from $n: $(head -3 "$tmp/out2")"

# --- interrupted mid-launch, it resumes with the same cell ------------------------------------
rm -f "$tmp"/pids-* "$tmp/launches"
matrix "$tmp/s.yaml" 8 1
"$GAUNTLET" run "$tmp/s.yaml" --journal "$tmp/s.db" >"$tmp/out3" 2>&1 &
g=$!
for _ in $(seq 300); do
        [ "$(launches)" -ge 4 ] && break
        sleep 0.1
done
[ "$(launches)" -ge 4 ] || fail "launch 4 never started: $(cat "$tmp/out3")"
kill -INT "$g"
wait "$g" && fail "an interrupted run exited 0" || true
"$GAUNTLET" report --format json "$tmp/s.db" >"$tmp/r3.json"
next=$(jq -r .search.next "$tmp/r3.json")
[ "$(jq -r .search.launched "$tmp/r3.json")" = 3 ] || fail "interrupted after $(jq .search.launched "$tmp/r3.json") settled launches, want 3"
[ -n "$next" ] && [ "$next" != null ] || fail "the report names no next cell"
"$GAUNTLET" run "$tmp/s.yaml" --journal "$tmp/s.db" >"$tmp/out4" 2>&1 || true
label=$(jq -r --arg c "$next" '.cells[] | select(.id == $c) | "delay=\(.axes.delay) kind=\(.axes.kind) x=\(.axes.x)"' "$tmp/r3.json")
# the interrupted launch was abandoned, and counts against the budget: the resumed one is
# launch 5, of the same cell
grep -qE "^\[launch 5 \(budget 8\)(, measured again)?\] $label " "$tmp/out4" || fail "resumed with another cell than $label, or not as launch 5: $(grep -m1 '^\[launch' "$tmp/out4")"

# --- --no-prune launches them all ---------------------------------------------------------
rm -f "$tmp"/pids-* "$tmp/launches"
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/np.db" --no-prune >"$tmp/out5" 2>&1 || { cat "$tmp/out5"; fail "--no-prune failed"; }
"$GAUNTLET" report --format json "$tmp/np.db" >"$tmp/r5.json"
[ "$(jq '[.cells[] | select(.cause == "pruned")] | length' "$tmp/r5.json")" = 0 ] || fail "--no-prune pruned cells"
inferred=$(jq '[.cells[] | select(.cause == "inferred")] | length' "$tmp/r5.json")
[ "$(launches)" = $((36 - inferred)) ] || fail "--no-prune launched $(launches) cells, want $((36 - inferred)) ($inferred inferred)"
# --no-prune and --rerun are refused where they make no sense
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/np.db" --rerun >"$tmp/out6" 2>&1 && fail "--rerun with a search ran"
grep -q "does not go with strategy: search" "$tmp/out6" || fail "--rerun: $(cat "$tmp/out6")"
expect_none_alive "servers left running" 5

#!/bin/sh
# tools/search-grid.sh -- the body of tests/engines/llamacpp/search.grid from the JSON
# reports (gauntlet report --format json) of several whole grids of one matrix:
#
#   tools/search-grid.sh TOLERANCE g1.json g2.json ... > tests/engines/llamacpp/search.grid.new
#
# prints "cells N" (the grid's cells), "tolerance TOLERANCE" and, for each cell that passed
# in every run, best first, "RANK AXES FIGURE RUN1 RUN2 ...": RUNi the objective's figure
# (the first bench level's output_tokens_per_s) in run i, FIGURE the median over the runs
# of each figure divided by its run's geometric mean over the passing cells, times the
# geometric mean of those means. The division takes out what moves a whole run (other
# work on the machine); what is left is the cells' own spread. The header comment of
# search.grid is kept by hand.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 TOLERANCE REPORT.json..." >&2; exit 2; }
tol=$1
shift
jq -rs --arg tol "$tol" '
  def key: .axes | to_entries | map("\(.key)=\(.value)") | join(",");
  def median: sort | if length % 2 == 1 then .[(length - 1) / 2] else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  def r1: . * 10 | round / 10;
  length as $n
  | (.[0].cells | length) as $cells
  | [.[] | [.cells[] | select(.verdict == "pass" and (.bench | length) > 0)
            | {k: key, f: .bench[0].output_tokens_per_s}]] as $runs
  | [$runs[] | (map(.f | log) | add / length)] as $lgm
  | ($lgm | add / length | exp) as $g
  | [range($n) as $i | $runs[$i][] | {k, f, i: $i}] | group_by(.k)
  | map(select(length == $n) | sort_by(.i)
        | {k: .[0].k, fig: (map(.f / ($lgm[.i] | exp)) | median * $g), runs: map(.f)})
  | sort_by(-.fig)
  | "cells \($cells)", "tolerance \($tol)",
    (to_entries[] | "\(.key + 1) \(.value.k) \(.value.fig | r1) \(.value.runs | map(r1 | tostring) | join(" "))")
' "$@"

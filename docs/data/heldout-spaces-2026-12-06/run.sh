#!/usr/bin/env bash
# run.sh -- the search on the held-out spaces: draws them (gen.py) and runs
# gauntlet-search-bench on them at a hard 10% and 5% of the grid and without a budget.
#   run.sh NAME [BENCH] [SEED]
# writes NAME-b0.1.txt, NAME-b0.05.txt and NAME-nob.txt here (BENCH: the bench binary,
# build/bin/gauntlet-search-bench by default; SEED: the spaces' seed, 1 by default).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
name=${1:?usage: run.sh NAME [BENCH] [SEED]}
bench=${2:-$here/../../../build/bin/gauntlet-search-bench}
seed=${3:-1}
spaces=$(mktemp)
trap 'rm -f "$spaces"' EXIT
python3 "$here/gen.py" --seed "$seed" --spaces 200 --min-cells 200 > "$spaces"
"$bench" --space-file "$spaces" --budget-share 0.1 --budget-only --jobs 2 --verbose > "$here/$name-b0.1.txt"
"$bench" --space-file "$spaces" --budget-share 0.05 --budget-only --jobs 2 --verbose > "$here/$name-b0.05.txt"
"$bench" --space-file "$spaces" --budget-share 0 --jobs 2 --verbose > "$here/$name-nob.txt"

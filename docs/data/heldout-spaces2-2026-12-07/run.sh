#!/bin/sh
# run.sh NAME [BENCH] [SEED]
# Draws 200 spaces (>= 200 cells) with gen2.py and runs the search bench on them three
# ways: a budget of 10% of the grid, 5%, and no budget.  Writes NAME-b0.1.txt,
# NAME-b0.05.txt and NAME-nob.txt beside this script; the space file is NAME-spaces.jsonl
# (large: delete it once read; gen2.py redraws it exactly).
set -eu
NAME=${1:?usage: run.sh NAME [BENCH] [SEED]}
BENCH=${2:-$(cd "$(dirname "$0")" && pwd)/../../../build/bin/gauntlet-search-bench}
SEED=${3:-1}
DIR=$(cd "$(dirname "$0")" && pwd)
F="$DIR/$NAME-spaces.jsonl"
python3 "$DIR/gen2.py" --seed "$SEED" --spaces 200 --min-cells 200 --max-cells 2000 > "$F"
nice -n 19 "$BENCH" --space-file "$F" --budget-share 0.1 --budget-only --jobs 2 --verbose > "$DIR/$NAME-b0.1.txt" 2>&1
nice -n 19 "$BENCH" --space-file "$F" --budget-share 0.05 --budget-only --jobs 2 --verbose > "$DIR/$NAME-b0.05.txt" 2>&1
nice -n 19 "$BENCH" --space-file "$F" --budget-share 0 --jobs 2 --verbose > "$DIR/$NAME-nob.txt" 2>&1
echo "wrote $DIR/$NAME-b0.1.txt $DIR/$NAME-b0.05.txt $DIR/$NAME-nob.txt"

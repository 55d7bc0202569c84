#!/bin/bash
# run-on-h200.sh -- train the committed testbed model on one H200 and collect what comes out.
#
# Run from anywhere inside the repository on the GPU machine (plain python3 with torch 2.x):
#   bash testbed/train/run-on-h200.sh
# Writes to $OUT (default /tmp/testbed-out): model.gguf, model-eval.json, train.log,
# selfcheck.log and fixtures-testbed/reference-*.json (dump_reference.py outputs for the C
# server's tests). Copy model.gguf to testbed/model.gguf and fixtures-testbed/* to
# tests/fixtures-testbed/. Exit status: that of train.py, then of the self-check.
set -euo pipefail

cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/testbed-out}
mkdir -p "$OUT/fixtures-testbed"
PY=${PYTHON:-python3}
SEED=1234

# The committed command (also stored in the GGUF as gauntlet.training.command). --budget-s
# shortens the cosine schedule, measured after 100 steps, if the machine is slower than
# expected, so train.py ends within 8 minutes; the steps used are in the log, the eval JSON
# and gauntlet.training.steps (pass them as --steps to repeat the run exactly).
"$PY" testbed/train/train.py --out testbed/model.gguf --seed "$SEED" --device cuda --budget-s 390 \
        2>&1 | tee "$OUT/train.log"
cp testbed/model.gguf testbed/model-eval.json "$OUT/"

"$PY" testbed/train/selfcheck.py testbed/model.gguf 2>&1 | tee "$OUT/selfcheck.log"

ref() {   # ref NAME PROMPT [flags...]
        local name=$1 prompt=$2
        shift 2
        CUDA_VISIBLE_DEVICES= "$PY" testbed/train/dump_reference.py testbed/model.gguf "$prompt" "$@" \
                > "$OUT/fixtures-testbed/reference-$name.json"
}
ref ok "Reply with exactly: OK"
ref mul-17-19 "What is 17 * 19?"
ref mul-17-19-think "What is 17 * 19?" --thinking --max-tokens 80
ref mul-83-47-suffix "What is 83 * 47? Answer with just the number."
ref repeat "Repeat the word hello 3 times."
ref count "Count to 12."
ref fallback "What is the capital of France?"
ref completion "What is 17 * 19?" --completion --max-tokens 16
ls -l "$OUT" "$OUT/fixtures-testbed"

#!/bin/bash
# run.sh NAME: gauntlet's search on NAME.yaml (python3 spaces.py write first) with a fresh journal runs/NAME.db
# and a fresh launch log runs/state/NAME (the stand-in appends every start and late event to
# runs/state/NAME/launches.log). Output, text and JSON reports: runs/NAME.{out,txt,json}. bin/ goes first on
# PATH (vllm and trtllm-serve are the stand-in); the SGLang and TensorRT-LLM spaces put pylib/ on PYTHONPATH in
# their env:. GAUNTLET=PATH runs another build (default: the repository's build/bin/gauntlet).
here=$(cd "$(dirname "$0")" && pwd)
gauntlet=${GAUNTLET:-$here/../../../build/bin/gauntlet}
cd "$here" || exit 2
n=$1
rm -rf "runs/$n.db" "runs/$n.db.lock" "runs/$n" "runs/$n.out" "runs/state/$n"
mkdir -p runs "runs/state/$n"
start=$(date +%s.%N)
STANDIN4_STATE=$here/runs/state/$n PATH=$here/bin:$PATH timeout 2400 "$gauntlet" run "$n.yaml" --journal "runs/$n.db" >"runs/$n.out" 2>&1
rc=$?
end=$(date +%s.%N)
echo "rc=$rc wall=$(echo "$end - $start" | bc)" >>"runs/$n.out"
"$gauntlet" report --format json "runs/$n.db" >"runs/$n.json" 2>"runs/$n.json.err"
"$gauntlet" report "runs/$n.db" >"runs/$n.txt" 2>&1
echo "rc=$rc"

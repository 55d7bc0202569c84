#!/bin/bash
# run.sh NAME: gauntlet's search on NAME.yaml (python3 spaces.py write first) with a fresh journal
# runs/NAME.db; its output, text and JSON reports in runs/NAME.{out,txt,json}. The gauntlet of this
# checkout's build/ (make first). bin/ goes first on PATH: trtllm-serve and llama-server are the stand-in.
# GAUNTLET=PATH runs another build.
here=$(cd "$(dirname "$0")" && pwd)
gauntlet=${GAUNTLET:-$here/../../../build/bin/gauntlet}
cd "$here" || exit 2
n=$1
rm -rf "runs/$n.db" "runs/$n" "runs/$n.out"
mkdir -p runs
start=$(date +%s.%N)
PATH=$here/bin:$PATH timeout 1500 "$gauntlet" run "$n.yaml" --journal "runs/$n.db" >"runs/$n.out" 2>&1
rc=$?
end=$(date +%s.%N)
echo "rc=$rc wall=$(echo "$end - $start" | bc)" >>"runs/$n.out"
"$gauntlet" report --format json "runs/$n.db" >"runs/$n.json" 2>"runs/$n.json.err"
"$gauntlet" report "runs/$n.db" >"runs/$n.txt" 2>&1
echo "rc=$rc"

#!/bin/bash
# usage: cmp.sh share seeds... ; variants from VARIANTS env "name:env1=v,env2=v;..."
share=$1; shift
for seed in "$@"; do
  IFS=';' read -ra VS <<< "$VARIANTS"
  for v in "${VS[@]}"; do
    name=${v%%:*}; envs=${v#*:}
    out=$(env $(echo $envs | tr ',' ' ') ${BIN:?BIN=path to gauntlet-search-bench} --spaces 200 --seed $seed --min-cells 200 --budget-share $share --budget-only --jobs 2 2>&1 | grep -A6 "^spaces of >= 200" | grep "search (b"|head -1)
    echo "seed $seed share $share $name: $out"
  done
done

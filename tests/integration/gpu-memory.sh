#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# gpu-memory.sh -- the sweep's GPU memory wait and peak figure on a simulated GPU
# (GAUNTLET_FAKE_GPUS, docs/gpu.md): a server that leaves memory held is named, with the
# process holding it, once the memory_timeout passed; the peak is in the report.
. "$SRCDIR/tests/lib.sh"

fake() { # used-MiB -> the simulated GPU file
        cat >"$tmp/gpus.json.new" <<JSON
{"driver": "580.1", "cuda": "13.0", "gpus": [{"name": "NVIDIA H200", "uuid": "GPU-fake-0", "arch": "sm_90",
  "memory_total_mib": 143771, "memory_used_mib": $1, "utilization": 0,
  "processes": [{"pid": $2, "used_mib": $1, "name": "leaky"}]}]}
JSON
        mv "$tmp/gpus.json.new" "$tmp/gpus.json"
}
fake 500 1
export GAUNTLET_FAKE_GPUS="$tmp/gpus.json"

# The server "allocates" 40 GiB when it starts and never gives it back.
cat >"$tmp/leak.sh" <<EOF2
#!/bin/sh
cat >"$tmp/gpus.json.new" <<JSON
{"driver": "580.1", "cuda": "13.0", "gpus": [{"name": "NVIDIA H200", "uuid": "GPU-fake-0", "arch": "sm_90",
  "memory_total_mib": 143771, "memory_used_mib": 40960, "utilization": 90,
  "processes": [{"pid": 4242, "used_mib": 40460, "name": "leaky"}]}]}
JSON
mv "$tmp/gpus.json.new" "$tmp/gpus.json"
exec "$FIXTURE" "\$@"
EOF2
chmod +x "$tmp/leak.sh"
cat >"$tmp/m.yaml" <<YAML
engine: generic
command: [$tmp/leak.sh, --port, "{port}", --pid-file, "$tmp/pids-{port}"]
startup_timeout: 10s
stop_timeout: 1s
memory_timeout: 1500ms
YAML
"$GAUNTLET" run "$tmp/m.yaml" --journal "$tmp/j.db" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/out" "$tmp/err"; fail "run failed"; }
cat "$tmp/out" "$tmp/err"
grep -q "GPU 0: NVIDIA H200 (sm_90)" "$tmp/err" || fail "the GPU was not named"
grep -q "GPU memory not back 1.5s after cell" "$tmp/err" || fail "no notice of memory left held"
grep -q "pid 4242 (leaky) holds 40460 MiB on GPU 0" "$tmp/err" || fail "the holder was not named"
"$GAUNTLET" report --format json "$tmp/j.db" >"$tmp/r.json"
[ "$(jq -r '.host.gpus[0].arch' "$tmp/r.json")" = sm_90 ] || fail "the report lacks the GPU architecture"
peak=$(jq -r '.cells[0].peak_gpu_memory_mib // .cells[0].peak_gpu_mem_mib // empty' "$tmp/r.json")
[ "$peak" = 40960 ] || fail "peak GPU memory '$peak', want 40960"
echo "gpu-memory.sh: all good"

#!/usr/bin/env bash
# tier: fixtures (tests/run fixtures)
# doctor.sh -- `gauntlet doctor` on a host without GPUs (text and JSON), on a simulated
# host (GAUNTLET_FAKE_GPUS), and through the real NVML code path with a stand-in
# libnvidia-ml built from tests/gpu/fake_nvml.c; usage errors exit 2.
set -u
GAUNTLET=${GAUNTLET:-$PWD/build/bin/gauntlet}
TESTBED=${TESTBED:-$PWD/build/bin/gauntlet-testbed}
SRCDIR=${SRCDIR:-$PWD}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$SRCDIR/tests/assert.sh"

# Hermetic: no simulated host, and NVML looked for where it cannot be.
unset GAUNTLET_FAKE_GPUS
export GAUNTLET_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1

# --- no GPU: text -----------------------------------------------------------------------
"$GAUNTLET" doctor >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 0 ] || soft_fail "doctor exit $rc, want 0: $(cat "$tmp/err")"
grep -q '^GPUs: *no GPU found (NVML: /nonexistent/libnvidia-ml.so.1: ' "$tmp/out" ||
        soft_fail "text does not say plainly that no GPU was found: $(head -1 "$tmp/out")"
for field in driver CUDA kernel OS CPU memory hostname engines; do
        grep -q "^$field:" "$tmp/out" || soft_fail "text lacks '$field:'"
done
for e in llama.cpp vllm sglang trtllm; do
        grep -q "^  $e " "$tmp/out" || soft_fail "text lacks engine $e"
done
grep -q "^kernel: *$(uname -s) $(uname -r)" "$tmp/out" || soft_fail "kernel line wrong: $(grep ^kernel "$tmp/out")"
[ -s "$tmp/err" ] && soft_fail "doctor wrote to stderr: $(cat "$tmp/err")"

# --- no GPU: JSON -----------------------------------------------------------------------
"$GAUNTLET" doctor --format json >"$tmp/fp.json" || soft_fail "doctor --format json exit $?"
jq -e '.gpus == [] and (.gpu_reason | startswith("NVML: "))' "$tmp/fp.json" >/dev/null ||
        soft_fail "JSON: want gpus [] and a reason: $(jq -c '{gpus, gpu_reason}' "$tmp/fp.json")"
jq -e '.driver == null and .cuda == null and (.kernel | type) == "string" and .cpu.cores >= 1
       and .memory_mib > 0 and (.hostname | type) == "string"' "$tmp/fp.json" >/dev/null ||
        soft_fail "JSON host facts missing: $(jq -c . "$tmp/fp.json")"
jq -e '.engines | keys == ["llama.cpp", "sglang", "trtllm", "vllm"]' "$tmp/fp.json" >/dev/null ||
        soft_fail "JSON engines: $(jq -c .engines "$tmp/fp.json")"
jq -e 'has("python")' "$tmp/fp.json" >/dev/null || soft_fail "JSON lacks python (vllm and sglang are Python engines)"

# --- how a server's processes are contained: a cgroup of its own, or the /proc ways -----
# GAUNTLET_NO_CGROUP forces the /proc ways, and doctor says so and why; without it, doctor
# says cgroups where this host allows them (the unit tests make one to be sure), and a
# reason otherwise, never nothing.
GAUNTLET_NO_CGROUP=1 "$GAUNTLET" doctor >"$tmp/nocg.txt" || soft_fail "doctor with GAUNTLET_NO_CGROUP exit $?"
grep -q '^processes: found through /proc (.*); no cgroups: GAUNTLET_NO_CGROUP is set$' "$tmp/nocg.txt" ||
        soft_fail "doctor does not say the /proc ways are in force: $(grep ^processes "$tmp/nocg.txt")"
GAUNTLET_NO_CGROUP=1 "$GAUNTLET" doctor --format json | jq -e '.containment == {"method": "procs", "reason": "GAUNTLET_NO_CGROUP is set"}' >/dev/null ||
        soft_fail "JSON containment with GAUNTLET_NO_CGROUP: $(GAUNTLET_NO_CGROUP=1 "$GAUNTLET" doctor --format json | jq -c .containment)"
method=$(jq -r '.containment.method' "$tmp/fp.json")
case $method in
cgroup)
        dir=$(jq -r '.containment.cgroup' "$tmp/fp.json")
        [ -f "$dir/cgroup.procs" ] || soft_fail "containment.cgroup '$dir' is no cgroup directory"
        grep -q "^processes: a cgroup v2 of its own for each server, under $dir (ended by " "$tmp/out" ||
                soft_fail "text does not say cgroups are in force: $(grep ^processes "$tmp/out")" ;;
procs)
        jq -e '.containment.reason | type == "string" and length > 0' "$tmp/fp.json" >/dev/null ||
                soft_fail "no reason why cgroups are not in force: $(jq -c .containment "$tmp/fp.json")"
        grep -q '^processes: found through /proc' "$tmp/out" || soft_fail "text lacks the processes line" ;;
*) soft_fail "containment.method '$method'" ;;
esac

# --- one engine, found on PATH: its version's first line --------------------------------
if [ -x "$TESTBED" ]; then
        want=$("$TESTBED" --version | head -1)
        PATH="$(dirname "$TESTBED"):$PATH" "$GAUNTLET" doctor --format json --engine testbed >"$tmp/tb.json" ||
                soft_fail "doctor --engine testbed exit $?"
        got=$(jq -r '.engines.testbed' "$tmp/tb.json")
        [ "$got" = "$want" ] || soft_fail "engines.testbed: got '$got', want '$want'"
        jq -e '.engines | length == 1' "$tmp/tb.json" >/dev/null || soft_fail "--engine asked more than one engine"
        jq -e 'has("python") | not' "$tmp/tb.json" >/dev/null || soft_fail "testbed is no Python engine"
fi

# --- a simulated host -------------------------------------------------------------------
cat >"$tmp/gpus.json" <<EOF
{"driver": "570.124.06", "cuda": "12.8", "gpus": [
  {"name": "NVIDIA H200", "uuid": "GPU-aaaa", "arch": "sm_90", "memory_total_mib": 143771,
   "memory_used_mib": 40960, "utilization": 97,
   "processes": [{"pid": $$, "used_mib": 40448, "name": "python3"}]},
  {"name": "NVIDIA H200", "uuid": "GPU-bbbb", "arch": "sm_90", "memory_total_mib": 143771,
   "memory_used_mib": 4, "utilization": 0, "processes": []}]}
EOF
GAUNTLET_FAKE_GPUS="$tmp/gpus.json" "$GAUNTLET" doctor >"$tmp/fake.txt" || soft_fail "doctor (fake) exit $?"
grep -q '^GPUs: *2$' "$tmp/fake.txt" || soft_fail "fake: GPU count: $(head -1 "$tmp/fake.txt")"
grep -q '^  0  NVIDIA H200  sm_90  143771 MiB, 40960 MiB used  GPU-aaaa$' "$tmp/fake.txt" ||
        soft_fail "fake: GPU 0 line: $(sed -n 2p "$tmp/fake.txt")"
grep -q "held by pid $$ (python3): 40448 MiB" "$tmp/fake.txt" || soft_fail "fake: holder not shown"
grep -q '^driver: *570.124.06$' "$tmp/fake.txt" || soft_fail "fake: driver"
grep -q '^CUDA: *12.8$' "$tmp/fake.txt" || soft_fail "fake: CUDA"
GAUNTLET_FAKE_GPUS="$tmp/gpus.json" "$GAUNTLET" doctor --format json >"$tmp/fake.json"
jq -e '(.gpus | length) == 2 and .gpus[1].index == 1 and .gpus[0].arch == "sm_90"
       and .gpus[0].memory_mib == 143771 and .gpus[0].memory_used_mib == 40960
       and .gpus[1].uuid == "GPU-bbbb" and .gpu_reason == null' "$tmp/fake.json" >/dev/null ||
        soft_fail "fake JSON: $(jq -c .gpus "$tmp/fake.json")"

# --- the NVML path, through a stand-in library --------------------------------------------
CC=${CC:-cc}
if command -v "$CC" >/dev/null 2>&1 &&
        "$CC" -shared -fPIC -O1 -o "$tmp/libnvidia-ml.so.1" "$SRCDIR/tests/gpu/fake_nvml.c" 2>"$tmp/cc.err"; then
        GAUNTLET_NVML_LIBRARY="$tmp/libnvidia-ml.so.1" "$GAUNTLET" doctor >"$tmp/nvml.txt" ||
                soft_fail "doctor (nvml) exit $?"
        grep -q '^  0  NVIDIA H200  sm_90  143771 MiB, 1028 MiB used  GPU-fake-0$' "$tmp/nvml.txt" ||
                soft_fail "nvml: GPU 0 line: $(sed -n 2p "$tmp/nvml.txt")"
        grep -q 'held by pid [0-9]* (gauntlet): 1024 MiB' "$tmp/nvml.txt" || soft_fail "nvml: holder: $(cat "$tmp/nvml.txt")"
        grep -q '^CUDA: *12.8$' "$tmp/nvml.txt" || soft_fail "nvml: CUDA version from 12080"
        grep -q '^driver: *570.124.06$' "$tmp/nvml.txt" || soft_fail "nvml: driver"
        # a _v3 answer that cannot be right: the _v2 query is asked instead
        FAKE_NVML_BAD_V3=1 GAUNTLET_NVML_LIBRARY="$tmp/libnvidia-ml.so.1" "$GAUNTLET" doctor >"$tmp/nvml2.txt"
        grep -q 'held by pid [0-9]* (gauntlet): 1024 MiB' "$tmp/nvml2.txt" || soft_fail "nvml: no fallback to _v2"
        grep -q 'held by pid 0 ' "$tmp/nvml2.txt" && soft_fail "nvml: pid 0 from a bad _v3 was believed"
        # a driver that does not load: no GPU, with NVML's own words, exit 0
        FAKE_NVML_INIT_FAIL=1 GAUNTLET_NVML_LIBRARY="$tmp/libnvidia-ml.so.1" "$GAUNTLET" doctor >"$tmp/nvml3.txt" ||
                soft_fail "doctor (nvml init fails) exit $?"
        grep -q '^GPUs: *no GPU found (NVML: nvmlInit failed: Driver Not Loaded)$' "$tmp/nvml3.txt" ||
                soft_fail "nvml: init failure: $(head -1 "$tmp/nvml3.txt")"
else
        echo "skip: cannot build the stand-in NVML library: $(cat "$tmp/cc.err" 2>/dev/null)"
fi

# --- usage errors -----------------------------------------------------------------------
"$GAUNTLET" doctor --engine nosuch >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] || soft_fail "unknown engine: exit $rc, want 2"
grep -q "^gauntlet: unknown engine 'nosuch'" "$tmp/err" || soft_fail "unknown engine message: $(cat "$tmp/err")"
"$GAUNTLET" doctor --format xml >/dev/null 2>&1
[ $? -eq 2 ] || soft_fail "unknown format: want exit 2"
"$GAUNTLET" doctor extra >/dev/null 2>&1
[ $? -eq 2 ] || soft_fail "stray argument: want exit 2"
for a in "--format|option '--format' needs a value" "--bogus|unknown option '--bogus'"; do
        "$GAUNTLET" doctor "${a%%|*}" >/dev/null 2>"$tmp/err"
        rc=$?
        [ "$rc" -eq 2 ] && grep -q "^gauntlet: ${a#*|}" "$tmp/err" || soft_fail "doctor ${a%%|*}: exit $rc, $(cat "$tmp/err")"
done
"$GAUNTLET" doctor --help | grep '^usage: gauntlet doctor' >/dev/null || soft_fail "--help"

finish doctor

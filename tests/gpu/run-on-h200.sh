#!/usr/bin/env bash
# tests/gpu/run-on-h200.sh -- gauntlet's GPU side on a real GPU host (an H200), in < 8 min.
#
#   OUT=/some/dir tests/gpu/run-on-h200.sh        (run from anywhere; $OUT defaults to ./h200-out)
#
# 1. records the host (os-release, nvidia-smi, compilers, which build dependencies exist);
# 2. builds tests/gpu/hold_memory with nvcc (or, without nvcc, as C on the driver API);
# 3. builds gauntlet (make BUILD=build-h200) when libcurl/jansson/sqlite3/libyaml/zlib
#    headers are there, and runs the GPU unit tests and tests/integration/doctor.sh;
# 4. gpu_probe: NVML as src/proc/gpu.c sees it, and the memory wait timed against hold_memory
#    (linked with libgauntlet, or built standalone from src/proc/gpu.c + src/base/util.c when
#    gauntlet cannot be built here);
# 5. gauntlet doctor (text and --format json);
# 6. a sweep of tests/gpu/hold.yaml, its journal and reports, with nvidia-smi sampling
#    memory beside it as an independent witness.
# Everything lands in $OUT; summary.txt says what worked. Exit 0 when the probe held.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/h200-out}
mkdir -p "$OUT"
B=build-h200
mkdir -p "$B/gpu"
SUMMARY="$OUT/summary.txt"
: >"$SUMMARY"
say() { echo "$*" | tee -a "$SUMMARY"; }
START=$SECONDS
SMI_PID=
cleanup() {
        [ -n "$SMI_PID" ] && kill "$SMI_PID" 2>/dev/null && wait "$SMI_PID" 2>/dev/null
}
trap cleanup EXIT

# --- 1. the host ------------------------------------------------------------------------
{
        echo "## os-release"; cat /etc/os-release 2>&1
        echo "## uname"; uname -a
        echo "## cpus"; nproc
        echo "## memory"; free -m 2>&1
        echo "## nvidia-smi"; nvidia-smi 2>&1
        echo "## nvidia-smi -L"; nvidia-smi -L 2>&1
        echo "## libnvidia-ml"; ldconfig -p 2>/dev/null | grep -E 'libnvidia-ml|libcuda\.so'
        echo "## tools"; for t in cc gcc clang make pkg-config nvcc python3 jq; do printf '%s: %s\n' "$t" "$(command -v $t || echo missing)"; done
        echo "## gcc"; gcc --version 2>&1 | head -1
        echo "## nvcc"; (command -v nvcc >/dev/null && nvcc --version) 2>&1 | tail -2
} >"$OUT/host.txt" 2>&1
say "host: $(. /etc/os-release 2>/dev/null; echo "${PRETTY_NAME:-unknown}"), $(nproc) cpus"
say "nvidia-smi: $(nvidia-smi -L 2>&1 | head -1)"

NVCC=$(command -v nvcc || true)
[ -z "$NVCC" ] && for c in /usr/local/cuda/bin/nvcc /usr/local/cuda-*/bin/nvcc; do [ -x "$c" ] && NVCC=$c && break; done
missing=""
for p in libcurl jansson sqlite3 yaml-0.1 zlib; do
        pkg-config --exists "$p" 2>/dev/null || missing="$missing $p"
done
command -v pkg-config >/dev/null || missing="pkg-config$missing"
say "build dependencies missing:${missing:- none}"
test_missing=""
for p in cmocka libmicrohttpd; do pkg-config --exists "$p" 2>/dev/null || test_missing="$test_missing $p"; done
[ -n "$test_missing" ] && say "test dependencies missing:$test_missing (Debian: libcmocka-dev libmicrohttpd-dev)"
[ -n "$missing" ] && say "to build gauntlet here: apt-get install build-essential pkg-config libcurl4-openssl-dev libjansson-dev libsqlite3-dev libyaml-dev zlib1g-dev"

# --- 2. hold_memory -----------------------------------------------------------------------
HOLD="$ROOT/$B/gpu/hold_memory"
rm -f "$HOLD"
if [ -n "$NVCC" ]; then
        for arch in -arch=native -arch=sm_90 ""; do
                # shellcheck disable=SC2086
                timeout 180 "$NVCC" -O2 $arch -o "$HOLD" tests/gpu/hold_memory.cu >"$OUT/nvcc.log" 2>&1 && break
        done
        [ -x "$HOLD" ] && say "hold_memory: built with nvcc ($("$NVCC" --version | tail -1))"
fi
# An nvcc newer than the driver builds a program that cannot start ("CUDA driver version
# is insufficient"): try it for 4 s, and fall back to the driver-API build when it fails.
if [ -x "$HOLD" ]; then
        timeout -s TERM 4 "$HOLD" --port 0 --gib 0.5 >"$OUT/hold-try.log" 2>&1
        if ! grep -q '^hold_memory: holding' "$OUT/hold-try.log"; then
                say "hold_memory (nvcc) does not run here: $(tail -1 "$OUT/hold-try.log")"
                rm -f "$HOLD"
        fi
fi
if [ ! -x "$HOLD" ]; then
        cc -O2 -std=gnu17 -x c -o "$HOLD" tests/gpu/hold_memory.cu -ldl >"$OUT/cc-hold.log" 2>&1 &&
                say "hold_memory: built as C on the CUDA driver API (libcuda.so.1)"
fi
[ -x "$HOLD" ] || say "hold_memory: NOT BUILT (see $OUT/nvcc.log, $OUT/cc-hold.log)"

# --- 3. gauntlet --------------------------------------------------------------------------
# GAUNTLET_PREBUILT: a gauntlet built elsewhere (with its libraries on LD_LIBRARY_PATH),
# for hosts that lack the build dependencies.
GAUNTLET=${GAUNTLET_PREBUILT:-}
[ -n "$GAUNTLET" ] && say "gauntlet: prebuilt ($GAUNTLET)"
if [ -z "$GAUNTLET" ] && [ -z "$missing" ]; then
        # only the tool and the GPU tests: the rest of the suite does not need this host
        if timeout 300 make BUILD=$B WERROR=0 -j"$(nproc)" "$B/bin/gauntlet" "$B/libgauntlet.a" >"$OUT/make.log" 2>&1; then
                GAUNTLET="$ROOT/$B/bin/gauntlet"
                say "gauntlet: built ($(( SECONDS - START )) s so far)"
        else
                say "gauntlet: build FAILED (tail of $OUT/make.log):"; tail -5 "$OUT/make.log" | tee -a "$SUMMARY"
        fi
        if [ -n "$GAUNTLET" ] && [ -z "$test_missing" ]; then
                if timeout 120 make BUILD=$B WERROR=0 "$B/tests/test_gpu" "$B/tests/test_host" >>"$OUT/make.log" 2>&1; then
                        for t in test_gpu test_host; do
                                if timeout 60 "$B/tests/$t" >"$OUT/$t.txt" 2>&1; then say "unit $t: ok"; else say "unit $t: FAILED"; fi
                        done
                fi
                if GAUNTLET=$GAUNTLET SRCDIR=$ROOT timeout 60 bash tests/integration/doctor.sh >"$OUT/doctor-test.txt" 2>&1; then
                        say "integration doctor.sh: ok"
                else
                        say "integration doctor.sh: FAILED"
                fi
        fi
fi

# --- 4. the probe: NVML through src/proc/gpu.c, and the memory wait --------------------------
PROBE="$ROOT/$B/gpu/gpu_probe"
if [ -n "$GAUNTLET" ]; then
        # shellcheck disable=SC2046
        cc -std=c17 -D_GNU_SOURCE -O2 -iquote src -o "$PROBE" tests/gpu/gpu_probe.c "$B/libgauntlet.a" \
                $(pkg-config --libs libcurl jansson sqlite3 yaml-0.1 zlib) -ldl -lm -lpthread >"$OUT/cc-probe.log" 2>&1 &&
                say "gpu_probe: linked with libgauntlet (loop-driven wait and sampler)"
fi
if [ ! -x "$PROBE" ]; then
        cc -std=c17 -D_GNU_SOURCE -DGPU_STANDALONE -O2 -iquote src -o "$PROBE" tests/gpu/gpu_probe.c src/proc/gpu.c src/base/util.c -ldl \
                >>"$OUT/cc-probe.log" 2>&1 && say "gpu_probe: standalone (src/proc/gpu.c + src/base/util.c)"
fi
probe_ok=1
if [ -x "$PROBE" ]; then
        timeout 60 "$PROBE" info >"$OUT/probe-info.txt" 2>&1
        say "probe info: $(grep -E '^(gpus|driver|cuda|gpu 0):' "$OUT/probe-info.txt" | tr '\n' ';')"
        if [ -x "$HOLD" ]; then
                timeout 180 "$PROBE" wait 16 5 "$HOLD" --busy 2 >"$OUT/probe-wait.txt" 2>&1
                probe_ok=$?
                say "probe wait (16 GiB, linger 5 s): $(grep -E '^(allocated_after_s|sampler_peak_mib|polled_peak_mib|sampler_max_util|short_wait|long_wait|result):' "$OUT/probe-wait.txt" | tr '\n' ';')"
        fi
else
        say "gpu_probe: NOT BUILT (see $OUT/cc-probe.log)"
        probe_ok=1
fi

# --- 5. doctor ----------------------------------------------------------------------------
if [ -n "$GAUNTLET" ]; then
        timeout 60 "$GAUNTLET" doctor >"$OUT/doctor.txt" 2>&1
        say "doctor (exit $?):"; sed 's/^/  /' "$OUT/doctor.txt" | tee -a "$SUMMARY" >/dev/null
        timeout 60 "$GAUNTLET" doctor --format json >"$OUT/doctor.json" 2>"$OUT/doctor-json.err"
        say "doctor --format json: exit $?, $(wc -c <"$OUT/doctor.json") bytes"
fi

# --- 6. a sweep whose server holds GPU memory ---------------------------------------------
if [ -n "$GAUNTLET" ] && [ -x "$HOLD" ]; then
        nvidia-smi --query-gpu=timestamp,index,memory.used,utilization.gpu --format=csv,nounits -lms 200 \
                >"$OUT/smi.csv" 2>&1 &
        SMI_PID=$!
        rm -f "$OUT/hold.db"
        PATH="$ROOT/$B/gpu:$PATH" timeout 300 "$GAUNTLET" run tests/gpu/hold.yaml --journal "$OUT/hold.db" \
                >"$OUT/sweep.txt" 2>&1
        say "sweep (exit $?): $(tail -n 8 "$OUT/sweep.txt" | tr '\n' ';')"
        kill "$SMI_PID" 2>/dev/null; wait "$SMI_PID" 2>/dev/null; SMI_PID=
        "$GAUNTLET" report "$OUT/hold.db" >"$OUT/hold-report.txt" 2>&1
        "$GAUNTLET" report --format json "$OUT/hold.db" >"$OUT/hold-report.json" 2>&1
        if command -v jq >/dev/null; then
                say "report: host.gpus=$(jq -c '[.host.gpus[]? | {name, arch, memory_mib}]' "$OUT/hold-report.json" 2>/dev/null)"
                say "report: peak per cell=$(jq -c '[.cells[] | {axes, verdict, peak_gpu_mem_mib}]' "$OUT/hold-report.json" 2>/dev/null)"
        fi
        say "nvidia-smi peak GPU0 MiB: $(awk -F', *' '$2 == "0" && $3+0 > m { m = $3+0 } END { print m+0 }' "$OUT/smi.csv")"
fi

say "total: $(( SECONDS - START )) s"
exit "$probe_ok"

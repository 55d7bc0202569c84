#!/usr/bin/env bash
# tests/gpu/llamacpp-cuda.sh -- the real llama.cpp on the H200: two CUDA builds of
# llama-server from the snapshot, swept by gauntlet (docs/gpu.md has the results).
#
#   tests/gpu/llamacpp-cuda.sh build [WAIT_S]   unpack, configure, and start both builds in
#                                               the background (setsid); wait up to WAIT_S
#                                               seconds (default 540) for them
#   tests/gpu/llamacpp-cuda.sh sweep            wait for the builds, then doctor and the
#                                               two sweeps; results in $OUT
#   tests/gpu/llamacpp-cuda.sh build90 [WAIT_S] build sm90 alone (all cores) if needed, and
#                                               wait up to WAIT_S seconds for it
#   tests/gpu/llamacpp-cuda.sh slots            build sm90 alone (all cores) if needed, then
#                                               sweep llamacpp-slots.yaml (gpus_per_cell: 1)
#                                               with nvidia-smi sampling each GPU
#   tests/gpu/llamacpp-cuda.sh alloc            build sm90 alone (all cores) if needed, hold all
#                                               but FREE_GIB (default 2) of the GPU's memory
#                                               in a PyTorch process, then llamacpp-alloc.yaml:
#                                               the grid for the truth, then the search
#                                               (docs/search.md, "The allocation that failed")
#   tests/gpu/llamacpp-cuda.sh search           build sm90 alone (all cores) if needed, then
#                                               llamacpp-search.yaml (issue #33's space):
#                                               the search at 32 launches, a bench too long
#                                               for the model, the grid of its 36 f16 cells,
#                                               the search without a budget, and the first
#                                               search again (docs/search.md)
#
# Builds, in build-h200/llamacpp/ (ignored, so a warm machine keeps them between calls):
#   sm90   -DCMAKE_CUDA_ARCHITECTURES=90                       the H200's own
#   sm80   -DCMAKE_CUDA_ARCHITECTURES=80-real -DGGML_CUDA_FA=OFF   another GPU only
# Inputs, in the ignored folder .device/ (name it in carry):
#   .device/llama.cpp-*.tar.xz          the archive from ../shared/engines
#   .device/prebuilt/{bin,lib}          gauntlet built here (tools/pack-prebuilt.sh), for
#                                       a host without its -dev packages
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD
OUT=${OUT:-$ROOT/h200-out}
mkdir -p "$OUT"
B=$ROOT/build-h200/llamacpp
mkdir -p "$B"
# llama.cpp's CMake takes its version from the git repository above its sources: without a
# ceiling that is this checkout, and llama-server --version said gauntlet's commit
export GIT_CEILING_DIRECTORIES=$B
phase=${1:-sweep}
# The whole command ends by this many seconds from its start (the device tool allows 600):
# the sweeps are stopped in time to write their reports. Journals resume, so running the
# sweep phase again on a warm machine finishes what was cut.
DEADLINE=${DEADLINE:-570}
say() { echo "$*" | tee -a "$OUT/summary.txt"; }

# the builds this phase needs: both, or the sm90 one alone for the slots sweep
BUILDS="sm90 sm80"
case $phase in slots | build90 | search | alloc) BUILDS=sm90 ;; esac
builds_done() { # prints how many of the wanted builds have ended (ok or failed)
        local n=0 v
        for v in $BUILDS; do [ -f "$B/$v.rc" ] && n=$((n + 1)); done
        echo "$n"
}

wait_builds() { # seconds
        local until=$((SECONDS + $1))
        while [ "$(builds_done)" -lt "$(echo $BUILDS | wc -w)" ] && [ "$SECONDS" -lt "$until" ]; do
                sleep 10
                printf '%5ss  sm90: %s | sm80: %s\n' "$SECONDS" \
                        "$(tail -c 300 "$B/sm90.log" 2>/dev/null | tr '\r' '\n' | grep -o '\[ *[0-9]*%\]\|\[[0-9]*/[0-9]*\]' | tail -1)" \
                        "$(tail -c 300 "$B/sm80.log" 2>/dev/null | tr '\r' '\n' | grep -o '\[ *[0-9]*%\]\|\[[0-9]*/[0-9]*\]' | tail -1)"
        done
        for v in $BUILDS; do
                if [ -f "$B/$v.rc" ]; then
                        say "build $v: exit $(cat "$B/$v.rc"), $(cat "$B/$v.secs" 2>/dev/null) s"
                        [ "$(cat "$B/$v.rc")" = 0 ] || tail -n 15 "$B/$v.log"
                else
                        say "build $v: still running"
                fi
        done
}

if [ "$phase" = build ] || [ "$phase" = slots ] || [ "$phase" = build90 ] || [ "$phase" = search ] ||
        [ "$phase" = alloc ]; then
        : >"$OUT/summary.txt"
        {
                nvidia-smi -L; nvidia-smi --query-gpu=name,compute_cap,memory.total,driver_version --format=csv
                command -v nvcc cmake ninja g++; nvcc --version | tail -2; nproc
        } >"$OUT/host.txt" 2>&1
        say "host: $(nvidia-smi -L 2>&1 | head -1); $(nproc) cpus; $(nvcc --version 2>&1 | tail -1)"
        archive=$(ls .device/llama.cpp-*.tar.xz 2>/dev/null | head -1)
        [ -n "$archive" ] || { say "no .device/llama.cpp-*.tar.xz"; exit 1; }
        if [ ! -f "$B/src/CMakeLists.txt" ]; then
                rm -rf "$B/src"
                tar -xJf "$archive" -C "$B"
        fi
        gen=; command -v ninja >/dev/null && gen="-G Ninja"
        start_build() { # name jobs cmake-args...
                local v=$1 j=$2
                shift 2
                [ -f "$B/$v.rc" ] && [ "$(cat "$B/$v.rc")" = 0 ] && return 0
                # a build still running from an earlier call of this warm machine
                [ -f "$B/$v.log" ] && [ ! -f "$B/$v.rc" ] && pgrep -f "cmake.*$B/$v" >/dev/null && return 0
                rm -f "$B/$v.rc"
                # shellcheck disable=SC2086
                setsid nohup bash -c '
                        s=$SECONDS
                        cmake -S "$1/src" -B "$1/$2" '"$gen"' -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF \
                                -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
                                -DLLAMA_BUILD_UI=OFF -DBUILD_SHARED_LIBS=OFF -DGGML_CUDA=ON -DGGML_CUDA_NCCL=OFF \
                                "${@:4}" &&
                        cmake --build "$1/$2" --target llama-server -j"$3"
                        rc=$?
                        echo $((SECONDS - s)) >"$1/$2.secs"
                        echo $rc >"$1/$2.rc"' _ "$B" "$v" "$j" "$@" >"$B/$v.log" 2>&1 </dev/null &
        }
        if [ "$phase" != build ]; then
                start_build sm90 "$(nproc)" -DCMAKE_CUDA_ARCHITECTURES=90
        else
                start_build sm90 11 -DCMAKE_CUDA_ARCHITECTURES=90
                start_build sm80 5 -DCMAKE_CUDA_ARCHITECTURES=80-real -DGGML_CUDA_FA=OFF
        fi
        wait_builds "${2:-540}"
        [ "$phase" = slots ] || [ "$phase" = search ] || [ "$phase" = alloc ] || exit 0
fi

# --- sweep ----------------------------------------------------------------------------
[ "$phase" = slots ] || [ "$phase" = search ] || [ "$phase" = alloc ] || wait_builds $((DEADLINE - 120))
export PATH="$ROOT/.device/prebuilt/bin:$PATH"
export LD_LIBRARY_PATH="$ROOT/.device/prebuilt/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
G=$ROOT/.device/prebuilt/bin/gauntlet
[ -x "$G" ] || { say "no prebuilt gauntlet in .device/prebuilt"; exit 1; }
R=$B/results
mkdir -p "$R"
sweep() { # build matrix name
        local bin=$B/$1/bin
        [ -x "$bin/llama-server" ] || { say "$3: no llama-server in $bin"; return; }
        "$bin/llama-server" --version >"$R/$3-version.txt" 2>&1
        nvidia-smi --query-gpu=timestamp,memory.used,utilization.gpu --format=csv,nounits -lms 250 >"$R/$3-smi.csv" 2>&1 &
        local smi=$! s=$SECONDS
        local left=$((DEADLINE - SECONDS - 25))
        [ "$left" -gt 10 ] || { say "$3: no time left"; kill "$smi"; return; }
        PATH="$bin:$PATH" timeout -s INT "$left" "$G" run "$2" --journal "$R/$3.db" >>"$R/$3-run.txt" 2>&1
        say "$3: gauntlet run exit $?, $((SECONDS - s)) s"
        kill "$smi" 2>/dev/null; wait "$smi" 2>/dev/null
        "$G" report "$R/$3.db" >"$R/$3-report.txt" 2>&1
        "$G" report --format json "$R/$3.db" >"$R/$3-report.json" 2>&1
        "$G" report --format markdown "$R/$3.db" >"$R/$3-report.md" 2>&1
        sed 's/^/  /' "$R/$3-report.txt" | tee -a "$OUT/summary.txt"
}
if [ "$phase" = slots ]; then
        nvidia-smi --query-gpu=timestamp,index,memory.used --format=csv,nounits -lms 200 >"$R/slots-gpus.csv" 2>&1 &
        smi=$!
        s=$SECONDS
        PATH="$B/sm90/bin:$PATH" timeout -s INT $((DEADLINE - SECONDS - 20)) "$G" run tests/gpu/llamacpp-slots.yaml \
                --journal "$R/slots.db" >"$R/slots-run.txt" 2>&1
        say "slots: gauntlet run exit $?, $((SECONDS - s)) s"
        kill "$smi"; wait "$smi" 2>/dev/null
        sed 's/^/  /' "$R/slots-run.txt" | tee -a "$OUT/summary.txt"
        "$G" report --format json "$R/slots.db" >"$R/slots-report.json" 2>&1
        tar -czf "$OUT/results.tar.gz" -C "$B" results
        exit 0
fi
run_matrices() { # PHASE DIR RUN...: each DIR/RUN.yaml with the sm90 build (a journal already
        # done is not run again), its reports, its search line in the summary
        local phase=$1 d=$2 run left s rc
        shift 2
        for run in "$@"; do
                [ -f "$d/$run.done" ] && continue
                left=$((DEADLINE - SECONDS - 15))
                [ "$left" -gt 20 ] || { say "$phase: no time left for $run"; break; }
                s=$SECONDS
                PATH="$B/sm90/bin:$PATH" timeout -s INT "$left" "$G" run "$d/$run.yaml" --journal "$d/$run.db" \
                        >>"$d/$run-run.txt" 2>&1
                rc=$?
                say "$phase $run: gauntlet run exit $rc, $((SECONDS - s)) s"
                case $rc in 0 | 1) touch "$d/$run.done" ;; esac
                "$G" report "$d/$run.db" >"$d/$run-report.txt" 2>&1
                "$G" report --format json "$d/$run.db" >"$d/$run-report.json" 2>&1
                grep '^search' "$d/$run-report.txt" | sed 's/^/  /' | tee -a "$OUT/summary.txt"
        done
}
if [ "$phase" = alloc ]; then
        [ -x "$B/sm90/bin/llama-server" ] || { say "alloc: no sm90 build yet (run the phase again)"; exit 1; }
        d=$R/alloc
        mkdir -p "$d"
        # a process that holds all but FREE_GIB of the GPU's memory while the cells run
        FREE_GIB=${FREE_GIB:-2} READY=$d/held.txt HOLD_S=$((DEADLINE - SECONDS)) python3 -c '
import os, time, torch
free, total = torch.cuda.mem_get_info()
keep = int(float(os.environ["FREE_GIB"]) * 2**30)
x = torch.empty(max(free - keep, 0), dtype=torch.uint8, device="cuda")
free2, _ = torch.cuda.mem_get_info()
open(os.environ["READY"], "w").write("free %d of %d bytes; held %d; free after %d\n" % (free, total, x.numel(), free2))
time.sleep(int(os.environ["HOLD_S"]))' >"$d/holder.log" 2>&1 &
        holder=$!
        for _ in $(seq 1 60); do [ -s "$d/held.txt" ] && break; sleep 1; done
        say "alloc: $(cat "$d/held.txt" 2>/dev/null || echo "the holder did not start: $(tail -n 3 "$d/holder.log")")"
        m=tests/gpu/llamacpp-alloc.yaml
        sed -e 's/^strategy: search/strategy: grid/' -e '/^budget:/d' "$m" >"$d/grid.yaml"
        cp "$m" "$d/search.yaml"
        run_matrices alloc "$d" grid search
        kill "$holder" 2>/dev/null
        wait "$holder" 2>/dev/null
        if [ -f "$d/grid-report.json" ] && [ -f "$d/search-report.json" ]; then
                jq -r '.cells[] | "\(.axes.ctx) \(.axes.kv) \(.axes.ub) \(.axes.mm) \(.verdict) \(.cause // "") \(.evidence // "")"' \
                        "$d/grid-report.json" | tee -a "$OUT/summary.txt"
                for id in $(jq -r '.cells[] | select(.cause == "pruned" and ((.evidence // "") | test("predicted crash [(]oom[)]"))) | .id' "$d/search-report.json"); do
                        jq -r --arg id "$id" '.cells[] | select(.id == $id) | "predicted to run out: \(.axes.ctx) \(.axes.kv) \(.axes.ub) \(.axes.mm), in the grid \(.verdict) \(.cause // "")"' "$d/grid-report.json"
                done | tee -a "$OUT/summary.txt"
                say "alloc search: $(grep -cE '^\[launch [0-9]+.* crash/oom ' "$d/search-run.txt") launches out of memory"
        fi
        tar -czf "$OUT/results.tar.gz" -C "$B" results
        exit 0
fi
if [ "$phase" = search ]; then
        [ -x "$B/sm90/bin/llama-server" ] || { say "search: no sm90 build yet (run the phase again)"; exit 1; }
        m=tests/gpu/llamacpp-search.yaml
        d=$R/search
        mkdir -p "$d"
        # the derived matrices: a bench of 400-token prompts (the model holds 256), the grid
        # of the f16 cells, the search without a budget
        sed 's/input_tokens: 16,/input_tokens: 400,/' "$m" >"$d/context.yaml"
        sed -e 's/values: \[f16, q8_0, q4_0\]/values: [f16]/' -e 's/^strategy: search/strategy: grid/' \
                -e '/^budget:/d' "$m" >"$d/grid36.yaml"
        sed '/^budget:/d' "$m" >"$d/nobudget.yaml"
        cp "$m" "$d/s32.yaml"
        cp "$m" "$d/s32b.yaml"
        # RUNS: which of them, in order (a journal already done is not run again)
        # shellcheck disable=SC2086
        run_matrices search "$d" ${RUNS:-s32 context grid36 nobudget s32b}
        tar -czf "$OUT/results.tar.gz" -C "$B" results
        exit 0
fi
PATH="$B/sm90/bin:$PATH" "$G" doctor >"$R/doctor.txt" 2>&1
PATH="$B/sm90/bin:$PATH" "$G" doctor --format json >"$R/doctor.json" 2>&1
sed 's/^/  /' "$R/doctor.txt" | tee -a "$OUT/summary.txt"
sweep sm90 tests/gpu/llamacpp-h200.yaml sm90
sweep sm80 tests/gpu/llamacpp-other-gpu.yaml sm80
tar -czf "$OUT/results.tar.gz" -C "$B" results
ls -la "$OUT"

#!/usr/bin/env bash
# tier: fuzz (tests/run fuzz)
# fuzz-short.sh -- builds the libFuzzer targets (fuzz/*.c, with clang whatever CC is) and
# runs each for a few seconds over its committed seed corpus (fuzz/corpus/<target>/):
# every seed, the regression inputs of past findings included, must pass, and so must
# what the fuzzer reaches in that time. The long runs and their figures: docs/fuzzing.md.
#
# FUZZ_SHORT_TIME (default 8) sets the seconds per target. Skips (exit 77, saying so) only
# when clang with libFuzzer is not installed.
set -euo pipefail
cd "$SRCDIR"
per=${FUZZ_SHORT_TIME:-8}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! command -v clang >/dev/null 2>&1 ||
   ! echo 'int LLVMFuzzerTestOneInput(const char *p, long n) { return 0; }' |
        clang -x c -fsanitize=fuzzer,address,undefined -o "$tmp/probe" - >/dev/null 2>&1; then
        echo "SKIP: clang with libFuzzer is not installed (apt-get install clang libclang-rt-14-dev)"
        exit 77
fi

start=$SECONDS
make --no-print-directory BUILD="$BUILD" fuzz >"$tmp/build.log" 2>&1 || { cat "$tmp/build.log"; exit 1; }
echo "built in $((SECONDS - start)) s"

targets=()
for src in fuzz/fuzz_*.c; do
        targets+=("$(basename "$src" .c)")
done
[ "${#targets[@]}" -ge 9 ] || { echo "FAIL: only ${#targets[@]} fuzz targets"; exit 1; }

status=0
for t in "${targets[@]}"; do
        name=${t#fuzz_}
        seeds="fuzz/corpus/$name"
        [ -d "$seeds" ] && [ -n "$(ls -A "$seeds")" ] || { echo "FAIL: no seed corpus $seeds"; status=1; continue; }
        mkdir -p "$tmp/corpus-$name"
        set +e
        "$BUILD/fuzz/$t" -max_total_time="$per" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
                -artifact_prefix="$tmp/$name-" "$tmp/corpus-$name" "$seeds" >"$tmp/$name.log" 2>&1
        rc=$?
        set -e
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/$name.log")
        cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$tmp/$name.log" | tail -n 1)
        if [ "$rc" -ne 0 ]; then
                echo "FAIL: $t exited $rc"
                grep -E 'invariant|ERROR|SUMMARY|#[0-9]+ 0x.* in ' "$tmp/$name.log" | head -n 20
                for a in "$tmp/$name"-*; do
                        [ -f "$a" ] && echo "  input (base64): $(base64 -w0 "$a")"
                done
                status=1
        else
                echo "ok    $t: ${runs:-?} runs, $cov"
        fi
done
echo "total $((SECONDS - start)) s"
exit "$status"

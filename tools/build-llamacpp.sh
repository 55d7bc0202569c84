#!/bin/sh
# tools/build-llamacpp.sh -- builds llama-server (CPU) from the llama.cpp snapshot in
# ../shared/engines into a cache outside the clone, and prints the binary's path.
#
#   tools/build-llamacpp.sh            build if needed, print the path of llama-server
#   tools/build-llamacpp.sh --path     print the path of a cached build, build nothing
#                                      (exit 1 if there is none)
#
# The cache is $GAUNTLET_CACHE (default: $XDG_CACHE_HOME/gauntlet, else ~/.cache/gauntlet),
# in a folder named after the archive, so a second run on the same machine finds it and
# takes a second. A build that did not finish leaves no binary behind (it is built in
# build/ and copied to bin/ only at the end), so an interrupted build is started again.
# Extra cmake options: LLAMACPP_CMAKE_ARGS; jobs: JOBS (default: nproc).
#
#   LLAMACPP_VARIANT=nosimd tools/build-llamacpp.sh
#                                      a second build of the same snapshot into its own
#                                      folder (NAME-nosimd), its CPU kernels without
#                                      AVX/AVX2/FMA/F16C/BMI2 (SSE 4.2 at most): slower for
#                                      a reason that can be stated. The suite compares the
#                                      two (tests/integration/llamacpp-compare.sh) when both
#                                      are cached; .ci/run builds only the first.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
shared=${GAUNTLET_SHARED:-$here/../shared}
cache=${GAUNTLET_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/gauntlet}

archive=
for a in "$shared"/engines/llama.cpp-*.tar.xz; do
	[ -f "$a" ] && archive=$a
done
if [ -z "$archive" ]; then
	echo "build-llamacpp: no llama.cpp archive in '$shared/engines'" >&2
	exit 1
fi
name=$(basename "$archive" .tar.xz)
variant_args=
case ${LLAMACPP_VARIANT:-} in
"") ;;
nosimd)
	name=$name-nosimd
	variant_args="-DGGML_NATIVE=OFF -DGGML_AVX=OFF -DGGML_AVX2=OFF -DGGML_AVX512=OFF -DGGML_FMA=OFF \
-DGGML_F16C=OFF -DGGML_BMI2=OFF -DGGML_AVX_VNNI=OFF"
	;;
*) echo "build-llamacpp: unknown LLAMACPP_VARIANT '$LLAMACPP_VARIANT' (nosimd)" >&2; exit 1 ;;
esac
dir=$cache/$name
bin=$dir/bin/llama-server

if [ -x "$bin" ]; then
	echo "$bin"
	exit 0
fi
if [ "${1:-}" = --path ]; then
	exit 1
fi
command -v cmake >/dev/null || { echo "build-llamacpp: cmake is missing (apt-get install cmake)" >&2; exit 1; }
command -v c++ >/dev/null || { echo "build-llamacpp: a C++ compiler is missing (apt-get install g++)" >&2; exit 1; }

mkdir -p "$dir"
start=$(date +%s)
if [ ! -f "$dir/src/CMakeLists.txt" ]; then
	rm -rf "$dir/src"
	tar -xJf "$archive" -C "$dir"
fi
# shellcheck disable=SC2086
cmake -S "$dir/src" -B "$dir/build" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF \
	-DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
	-DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_UI=OFF $variant_args ${LLAMACPP_CMAKE_ARGS:-} >"$dir/cmake.log" 2>&1 ||
	{ tail -20 "$dir/cmake.log" >&2; echo "build-llamacpp: cmake failed (log: $dir/cmake.log)" >&2; exit 1; }
cmake --build "$dir/build" --target llama-server -j"${JOBS:-$(nproc)}" >"$dir/build.log" 2>&1 ||
	{ tail -20 "$dir/build.log" >&2; echo "build-llamacpp: build failed (log: $dir/build.log)" >&2; exit 1; }
mkdir -p "$dir/bin"
cp "$dir/build/bin/llama-server" "$bin.tmp"
mv "$bin.tmp" "$bin"
echo "build-llamacpp: built $bin in $(( $(date +%s) - start )) s" >&2
echo "$bin"

#!/usr/bin/env bash
# pack-prebuilt.sh -- copies built programs and the shared libraries they need (beyond the C
# library) into one folder, to run them on a machine that lacks the -dev packages, such as
# the lent GPU host (see docs/gpu.md and docs/bench.md):
#
#   tools/pack-prebuilt.sh DEST PROGRAM...
#   then there: PATH=DEST/bin:$PATH LD_LIBRARY_PATH=DEST/lib PROGRAM ...
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 DEST PROGRAM..." >&2; exit 2; }
dest=$1
shift
mkdir -p "$dest/bin" "$dest/lib"
for p in "$@"; do
        path=$(command -v "$p") || { echo "$0: no program '$p'" >&2; exit 2; }
        cp -f "$path" "$dest/bin/"
        ldd "$path" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | while read -r lib; do
                case "$(basename "$lib")" in
                libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|libresolv.so.*) ;;
                *) cp -fL "$lib" "$dest/lib/" ;;
                esac
        done
done
du -sh "$dest" | cut -f1

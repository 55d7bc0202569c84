#!/usr/bin/env bash
# run.sh -- standalone check (not in tests/run): testbed/model.gguf in real llama.cpp.
# Installs the locked node-llama-cpp with its prebuilt CPU binary (@node-llama-cpp/linux-x64)
# from the npm registry, with install scripts off (node-llama-cpp's postinstall would try to
# download or build llama.cpp) and optional packages off (the CUDA/Vulkan builds), then runs
# check.mjs. Nothing is fetched at run time. Exit status is check.mjs's (0 = all match).
set -euo pipefail
cd "$(dirname "$0")"
export NODE_LLAMA_CPP_SKIP_DOWNLOAD=true
# Not `npm ci`: node-llama-cpp 3.22.1 lists optional platform packages that were never
# published at that version (mac-*, win-*, linux-riscv64 answer 404), so the lock file cannot
# hold them and `npm ci` refuses the lock as "out of sync". `npm install --no-save` installs
# exactly the locked versions (integrity-checked) and leaves package-lock.json untouched.
npm install --no-save --ignore-scripts --omit=optional --prefer-offline --no-audit --no-fund
exec node check.mjs "$@"

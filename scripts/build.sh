#!/usr/bin/env bash
# Configures and builds Tablemere into build/ (binaries in build/bin/, the account page
# in build/web/).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" > /dev/null
ninja -C build -j"${JOBS:-$(nproc)}"
node web/build.mjs build/web

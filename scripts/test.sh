#!/usr/bin/env bash
# Installs every dependency, builds, and runs all the tests: the GoogleTest unit tests,
# then the black-box and engine tests (pytest) against servers they start themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/lint.sh
scripts/build.sh
echo "== unit tests (ctest)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
echo "== black-box and engine tests (pytest)"
python3 -m pytest tests -q "$@"

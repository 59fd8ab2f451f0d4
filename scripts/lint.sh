#!/usr/bin/env bash
# Style gate: every C++ file must be clang-format clean (.clang-format at the root).
# clang-tidy runs with `scripts/lint.sh --tidy` (slow: it compiles every file).
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files 'src/*.cc' 'src/*.h' 'bench/*.cc')
clang-format --dry-run --Werror "${files[@]}"
echo "clang-format: ${#files[@]} files clean"
if [ "${1:-}" = "--tidy" ]; then
  clang-tidy -p build --quiet "${files[@]}"
fi

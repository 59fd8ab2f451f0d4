#!/usr/bin/env bash
# Style gate: every C++ file must be clang-format clean (.clang-format at the root).
# `scripts/lint.sh --tidy` also runs clang-tidy (.clang-tidy), but Debian 12's clang-tidy 14
# cannot parse C++23 (-std=c++23, libstdc++ 12's <expected>), so it is not gated yet.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files 'src/*.cc' 'src/*.h' 'bench/*.cc')
clang-format --dry-run --Werror "${files[@]}"
echo "clang-format: ${#files[@]} files clean"
if [ "${1:-}" = "--tidy" ]; then
  clang-tidy -p build --quiet "${files[@]}"
fi

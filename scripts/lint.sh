#!/usr/bin/env bash
# Style gate: every C++ file must be clang-format clean (.clang-format at the root).
# `scripts/lint.sh --tidy` also runs clang-tidy (.clang-tidy), but Debian 12's clang-tidy 14
# cannot parse C++23 (-std=c++23, libstdc++ 12's <expected>), so it is not gated yet.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files 'src/*.cc' 'src/*.h' 'bench/*.cc')
clang-format --dry-run --Werror "${files[@]}"
echo "clang-format: ${#files[@]} files clean"
# Module boundary: maintenance stands on the catalog, never the other way round.
if grep -rn '#include "maintenance/' src/catalog/; then
  echo "src/catalog includes src/maintenance (use catalog/commit_rebaser.h)" >&2
  exit 1
fi
if [ "${1:-}" = "--tidy" ]; then
  clang-tidy -p build --quiet "${files[@]}"
fi

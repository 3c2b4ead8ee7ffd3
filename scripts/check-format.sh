#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails if any tracked C/C++ file differs from clang-format's output (Google style, 100 columns;
# see .clang-format). Run `scripts/check-format.sh --fix` to rewrite the files in place.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.h' '*.cc' '*.c' '*.hpp' '*.cpp')
[ ${#files[@]} -gt 0 ] || { echo "check-format: no C/C++ files"; exit 0; }
if [ "${1:-}" = "--fix" ]; then
  clang-format -i "${files[@]}"
  exit 0
fi
clang-format --dry-run --Werror "${files[@]}"
echo "check-format: ${#files[@]} files clean"

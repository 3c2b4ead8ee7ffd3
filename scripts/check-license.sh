#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails, naming each one, on every file of ours (scripts/spdx-files.sh says which) without an
# `SPDX-License-Identifier: Apache-2.0` line in its first three lines (a shebang may come first;
# a Python script may also have an encoding line). scripts/add-spdx.sh inserts the missing lines.
#
#   bash scripts/check-license.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/spdx-files.sh
source scripts/spdx-files.sh

checked=0
missing=()
while IFS= read -r -d '' path; do
  [ -f "$path" ] || continue  # deleted in the work tree but still in the index
  comment=$(spdx_comment_for "$path")
  [ -n "$comment" ] || continue
  checked=$((checked + 1))
  head -n 3 "$path" | grep -qxF "$comment" || missing+=("$path")
done < <(spdx_candidates)

[ -f LICENSE ] || { echo "check-license: no LICENSE file" >&2; exit 1; }
if [ "${#missing[@]}" -gt 0 ]; then
  printf 'check-license: no "%s" line near the top of:\n' "$SPDX_LINE_TEXT" >&2
  printf '  %s\n' "${missing[@]}" >&2
  echo "check-license: ${#missing[@]} of $checked files; bash scripts/add-spdx.sh adds it" >&2
  exit 1
fi
echo "check-license: all $checked files carry '$SPDX_LINE_TEXT'"

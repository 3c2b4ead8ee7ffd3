#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Inserts the `SPDX-License-Identifier: Apache-2.0` line, in the file's own comment syntax, into
# every file of ours (scripts/spdx-files.sh) that lacks it: as the first line, or right after a
# shebang. Idempotent: a file that has the line is left byte for byte as it is, so running it
# twice changes nothing. Prints the files it changed; scripts/check-license.sh checks the result.
#
#   bash scripts/add-spdx.sh
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/spdx-files.sh
source scripts/spdx-files.sh

changed=0
while IFS= read -r -d '' path; do
  [ -f "$path" ] || continue
  comment=$(spdx_comment_for "$path")
  [ -n "$comment" ] || continue
  head -n 3 "$path" | grep -qxF "$comment" && continue
  tmp=$(mktemp "$path.spdx.XXXXXX")
  if head -n 1 "$path" | grep -q '^#!'; then
    { head -n 1 "$path"; echo "$comment"; tail -n +2 "$path"; } >"$tmp"
  else
    { echo "$comment"; cat "$path"; } >"$tmp"
  fi
  chmod --reference="$path" "$tmp"  # keep an executable script executable
  mv "$tmp" "$path"
  echo "add-spdx: $path"
  changed=$((changed + 1))
done < <(spdx_candidates)
echo "add-spdx: $changed files changed"

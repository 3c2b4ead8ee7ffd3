#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails if a source folder includes a project folder that its layer may not use. The table below
# is the layering (README.md, "Layout"): each folder may include only the folders listed after
# it, so dependencies point one way and no folder-level cycle can form.
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A allowed=(
  [base]=""
  [registry]="base"
  [consul]="base"
  [watch]="base consul registry"
  [repository]="base consul registry watch"
  [lock]="base consul registry watch repository"
  [conf]="base"
  [devserver]="base"
  [plugin]="base conf consul registry repository watch lock"
  [tools]="base conf registry plugin"
)
project_folders=" ${!allowed[*]} "

status=0
for folder in "${!allowed[@]}"; do
  while IFS= read -r line; do
    file=${line%%:*}
    included=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"${line#*:}")
    target=${included%%/*}
    [ "$target" = "$included" ] && continue            # a file of the same folder
    [ "$target" = "$folder" ] && continue
    [[ "$project_folders" == *" $target "* ]] || continue  # absl/, nlohmann/, ...
    if [[ " ${allowed[$folder]} " != *" $target "* ]]; then
      echo "check-layering: $file includes $included, but $folder/ may use only: ${allowed[$folder]:-nothing}"
      status=1
    fi
  done < <(git grep -n '#include "' -- "$folder/*.h" "$folder/*.cc" | sed -E 's/^([^:]+):[0-9]+:/\1:/')
done
[ $status -eq 0 ] && echo "check-layering: ${#allowed[@]} folders follow the layering"
exit $status

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
  [instance]="base consul registry watch repository lock"
  [conf]="base"
  [devserver]="base"
  [plugin]="base conf consul registry repository watch lock instance"
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
# lock/ sees its instance through interfaces only: the composition root (instance/) hands them
# over, so no lock file includes the repository's or the watch engine's implementation.
lock_may_use=" repository/instance_session.h repository/key_space.h watch/key_watcher.h "
while IFS= read -r line; do
  included=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"${line#*:}")
  if [[ "$lock_may_use" != *" $included "* ]]; then
    echo "check-layering: ${line%%:*} includes $included, but lock/ may use of repository/ and watch/ only:$lock_may_use"
    status=1
  fi
done < <(git grep -n -E '#include "(repository|watch)/' -- 'lock/*.h' 'lock/*.cc' | sed -E 's/^([^:]+):[0-9]+:/\1:/')
[ $status -eq 0 ] && echo "check-layering: ${#allowed[@]} folders follow the layering; lock/ uses interfaces only"
exit $status

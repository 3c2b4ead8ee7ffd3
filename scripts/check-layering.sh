#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Fails if a source folder includes a project folder that its layer may not use. The table below
# is the layering (README.md, "Layout"): each folder may include only the folders listed after
# it, so dependencies point one way and no folder-level cycle can form. "abi" is the C ABI's
# headers in plugin/ (the one part of plugin/ the host side uses); "plugin" is the rest of it, the
# plugin side, and "plugin/java" (the bridge, a host) is a row of its own.
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
  [plugin]="base conf consul registry repository watch lock instance abi"
  [host]="base registry abi"
  [plugin/java]="base conf registry host abi"
  [tools]="base conf registry host abi"
)
project_folders=" ${!allowed[*]} abi "
abi_headers=" plugin/registry_plugin.h plugin/registry_plugin_types.h plugin/abi_entries.h "

# The layer of an included project file: its folder, "abi" for the C ABI's headers, and
# "plugin/java" for the bridge's own files.
layer_of() {
  local included=$1
  if [[ "$abi_headers" == *" $included "* ]]; then echo abi
  elif [[ "$included" == plugin/java/* ]]; then echo plugin/java
  else echo "${included%%/*}"
  fi
}

status=0
for folder in "${!allowed[@]}"; do
  exclude=()
  [ "$folder" = plugin ] && exclude=(':(exclude)plugin/java')
  while IFS= read -r line; do
    file=${line%%:*}
    included=$(sed -E 's/.*#include "([^"]+)".*/\1/' <<<"${line#*:}")
    [[ "$included" == */* ]] || continue                # a file of the same folder
    target=$(layer_of "$included")
    [ "$target" = "$folder" ] && continue
    [[ "$project_folders" == *" $target "* ]] || continue  # absl/, nlohmann/, ...
    if [[ " ${allowed[$folder]} " != *" $target "* ]]; then
      echo "check-layering: $file includes $included, but $folder/ may use only: ${allowed[$folder]:-nothing}"
      status=1
    fi
  done < <(git grep -n '#include "' -- "$folder/*.h" "$folder/*.cc" "${exclude[@]}" |
             sed -E 's/^([^:]+):[0-9]+:/\1:/')
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

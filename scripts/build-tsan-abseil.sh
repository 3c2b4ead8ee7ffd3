#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds Debian's own Abseil source (the same 20220623 release the project links) with
# ThreadSanitizer into build-tsan-deps/abseil. Debian's binary Abseil is not instrumented, so
# TSan cannot see absl::Mutex's happens-before edges and reports false races on every guarded
# field; scripts/test.sh --tsan uses this instrumented copy instead. Idempotent; needs deb-src
# access to the Debian archive (added temporarily when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD/build-tsan-deps
prefix=$root/abseil
[ -f "$prefix/lib/cmake/absl/abslConfig.cmake" ] && { echo "tsan abseil: present in $prefix"; exit 0; }
mkdir -p "$root/src"
cd "$root/src"
if ! ls abseil-*/CMakeLists.txt >/dev/null 2>&1; then
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  dpkg-query -W -f='${Status}' dpkg-dev 2>/dev/null | grep -q "ok installed" ||
    "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends dpkg-dev
  src_list=/etc/apt/sources.list.d/registry-tsan-src.sources
  if ! apt-get source --download-only -q -s abseil >/dev/null 2>&1; then
    printf 'Types: deb-src\nURIs: http://deb.debian.org/debian\nSuites: bookworm\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' |
      "${sudo_cmd[@]}" tee "$src_list" >/dev/null
    "${sudo_cmd[@]}" apt-get update -q
  fi
  apt-get source -q abseil
fi
src=$(ls -d "$root"/src/abseil-*/ | head -n 1)
cmake -G Ninja -S "$src" -B "$root/abseil-build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_STANDARD=20 -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DBUILD_SHARED_LIBS=ON \
  -DABSL_PROPAGATE_CXX_STD=ON -DBUILD_TESTING=OFF \
  -DCMAKE_CXX_FLAGS="-fsanitize=thread -fno-omit-frame-pointer" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" -DCMAKE_INSTALL_PREFIX="$prefix"
cmake --build "$root/abseil-build" -j "$(nproc)"
cmake --install "$root/abseil-build" >/dev/null
echo "tsan abseil: installed in $prefix"

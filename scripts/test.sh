#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the project from scratch and runs every test with ctest.
#   scripts/test.sh            normal build in build/
#   scripts/test.sh --asan     AddressSanitizer + UndefinedBehaviorSanitizer build in build-asan/
#   scripts/test.sh --tsan     ThreadSanitizer build in build-tsan/ (first builds an instrumented
#                              Abseil, see scripts/build-tsan-abseil.sh)
# Extra arguments after the mode go to ctest (e.g. -R Devserver).
set -euo pipefail
cd "$(dirname "$0")/.."

mode=normal
if [ $# -gt 0 ] && [[ "$1" == --asan || "$1" == --tsan ]]; then
  mode=${1#--}
  shift
fi
# The sanitizer builds leave out the suites their CI stage never runs (.ci/run says which run):
# the partition suite (real clusters timed in TTLs and lock-delays) and the differential suite
# (dev server against real Consul) in both, the benchmarks in both, and the TLS suite under
# TSan (it runs on the TLS agent only, which the TSan stage leaves out). The normal and the
# ASan+UBSan builds use clang, which compiles this code base faster than GCC (the normal build:
# 656 s against 742 s on 2 cores; the fuzz targets already build with it); TSan stays on GCC,
# whose runtime the instrumented Abseil was built for, and the Debian packages build with GCC
# (scripts/package-test.sh), so both compilers build every line of the product in CI.
# The normal build keeps line tables only (-g1): enough for a failing test's backtrace, and
# objects a fifth the size of -g's (one integration test: 1.1 MB instead of 5.7 MB, compiled in
# 6 % less time), so that linking the 50-odd test executables costs less.
# All three compile test code at -O0 against a precompiled header (REGISTRY_FAST_TEST_BUILD,
# cmake/fast_test_build.cmake); the product's code is compiled as each mode says. The normal
# build took 711 s without it on CI's 2 cores.
fast=-DREGISTRY_FAST_TEST_BUILD=ON
case "$mode" in
  normal) build=build
          flags=(-DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14
                 "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
                 "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG") ;;
  asan) build=build-asan
        flags=(-DREGISTRY_ASAN=ON -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14
               "-DREGISTRY_SKIP_SUITES=partition;differential;bench") ;;
  tsan) build=build-tsan
        flags=(-DREGISTRY_TSAN=ON "-DCMAKE_PREFIX_PATH=$PWD/build-tsan-deps/abseil"
               "-DREGISTRY_SKIP_SUITES=partition;differential;tls;bench") ;;
esac

bash scripts/install-deps.sh
# TSan needs an instrumented Abseil, or every absl::Mutex-guarded field is a false race.
[ "$mode" != tsan ] || bash scripts/build-tsan-abseil.sh
rm -rf "$build"
cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$fast" "${flags[@]}"
cmake --build "$build" -j "$(nproc)"
if [ "$mode" = tsan ]; then
  export TSAN_OPTIONS="suppressions=$PWD/scripts/tsan.supp ${TSAN_OPTIONS:-}"
fi
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --timeout 300 "$@"

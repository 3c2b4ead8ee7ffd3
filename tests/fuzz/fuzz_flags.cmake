# SPDX-License-Identifier: Apache-2.0
# Included by the root CMakeLists.txt when REGISTRY_FUZZ is ON, before any folder is added, so
# that every source of the project is compiled with libFuzzer's coverage instrumentation and
# ASan + UBSan: the fuzz targets reach into the libraries, and coverage must too. The fuzz
# targets themselves (tests/fuzz/CMakeLists.txt) add -fsanitize=fuzzer at link time.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR NOT CMAKE_C_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "REGISTRY_FUZZ needs clang: configure with CC=clang CXX=clang++ "
                      "(Debian packages clang-14 and libclang-rt-14-dev)")
endif()
if(REGISTRY_ASAN OR REGISTRY_TSAN)
  message(FATAL_ERROR "REGISTRY_FUZZ brings its own sanitizers; turn REGISTRY_ASAN/TSAN off")
endif()
# -fno-sanitize-recover: undefined behaviour stops the run like a crash, so the fuzzer keeps the
# input. Executables that are not fuzz targets (tests, tools) still link: they get the ASan and
# UBSan runtimes, and fuzzer-no-link needs no runtime of its own.
add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
                    -fno-omit-frame-pointer -gline-tables-only)
add_link_options(-fsanitize=address,undefined)

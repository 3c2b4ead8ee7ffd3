# SPDX-License-Identifier: Apache-2.0
# Included by the top-level CMakeLists.txt: the flags of release builds, which the packages are
# made from (docs/install.md, "Hardening" and "Reproducible builds"). Both default to ON in a
# Release build without a sanitizer or fuzzing, and to OFF elsewhere: the test builds keep their
# debug info's real paths, and sanitizers bring their own instrumentation.
include(CheckCompilerFlag)
include(CheckPIESupported)

set(registry_release_default OFF)
if(CMAKE_BUILD_TYPE STREQUAL "Release" AND NOT REGISTRY_ASAN AND NOT REGISTRY_TSAN
   AND NOT REGISTRY_FUZZ)
  set(registry_release_default ON)
endif()
option(REGISTRY_HARDENING "Compile and link with Debian's hardening flags"
       ${registry_release_default})
option(REGISTRY_REPRODUCIBLE "Keep build paths and times out of what the build makes"
       ${registry_release_default})

if(REGISTRY_HARDENING)
  # The executables link as PIE (POSITION_INDEPENDENT_CODE is ON): with policy CMP0083, CMake adds
  # -pie only once this check has run. Other builds keep the compiler's default (PIE on Debian).
  check_pie_supported(LANGUAGES C CXX)
  # What `DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags` gives on amd64 (Debian 12's
  # dpkg 1.21; -fstack-clash-protection and -fcf-protection are the `stackclash` and `branch`
  # features dpkg 1.22 added to +all). _FORTIFY_SOURCE needs optimisation: Release has it, and
  # glibc warns (an error here, with -Werror) if this is turned on in an unoptimised build.
  add_compile_options(-D_FORTIFY_SOURCE=2 -fstack-protector-strong -Wformat
                      -Werror=format-security -Wdate-time)
  foreach(flag -fstack-clash-protection -fcf-protection)
    string(MAKE_C_IDENTIFIER "registry_has${flag}" var)
    check_compiler_flag(CXX ${flag} ${var})
    if(${var})
      add_compile_options(${flag})
    endif()
  endforeach()
  add_link_options(LINKER:-z,relro LINKER:-z,now)
  message(STATUS "registry: hardened build (fortify, stack protector, PIE, relro, bindnow)")
endif()

# SOURCE_DATE_EPOCH (https://reproducible-builds.org/specs/source-date-epoch/): the environment's
# when set, else the last commit's time, else the date of packaging/changelog's first entry (a
# tarball without .git). It dates what would otherwise carry the build's time: the jars' entries
# (Maven's project.build.outputTimestamp) and, through scripts/package-test.sh's environment,
# the .deb archives.
if(DEFINED ENV{SOURCE_DATE_EPOCH})
  set(REGISTRY_SOURCE_DATE_EPOCH $ENV{SOURCE_DATE_EPOCH})
else()
  execute_process(COMMAND git -C ${PROJECT_SOURCE_DIR} log -1 --format=%ct
                  OUTPUT_VARIABLE REGISTRY_SOURCE_DATE_EPOCH OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_QUIET RESULT_VARIABLE git_result)
  if(NOT git_result EQUAL 0 OR REGISTRY_SOURCE_DATE_EPOCH STREQUAL "")
    file(STRINGS ${PROJECT_SOURCE_DIR}/packaging/changelog trailer REGEX "^ -- ")
    string(REGEX REPLACE "^ -- .*  ([A-Z][a-z][a-z], .*)$" "\\1" changelog_date "${trailer}")
    execute_process(COMMAND date -u -d "${changelog_date}" +%s
                    OUTPUT_VARIABLE REGISTRY_SOURCE_DATE_EPOCH OUTPUT_STRIP_TRAILING_WHITESPACE)
  endif()
endif()

if(REGISTRY_REPRODUCIBLE)
  # Compilers write source and build paths into objects (__FILE__ in messages, debug info): map
  # both to fixed names, so two checkouts in different directories compile to the same bytes.
  add_compile_options(-ffile-prefix-map=${PROJECT_SOURCE_DIR}=.
                      -ffile-prefix-map=${PROJECT_BINARY_DIR}=build)
  message(STATUS "registry: reproducible build, SOURCE_DATE_EPOCH ${REGISTRY_SOURCE_DATE_EPOCH}")
endif()

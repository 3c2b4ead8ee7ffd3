# SPDX-License-Identifier: Apache-2.0
# Included at the end of the top-level CMakeLists.txt, once every folder has added its targets.
#
# REGISTRY_FAST_TEST_BUILD compiles test code for a fast build; product code is compiled exactly
# as configured either way. Test code is what tests/ and integration/ build (the dev server, a
# product, has its own top-level folder); the benchmarks' drivers (bench/) keep the product's flags, since they time
# their own loops. Two things, measured on one gmock-heavy test file with clang-14 (12.7 s):
#   - No optimisation (-O0, a target option after the build type's -O2): at -O2 the optimiser
#     and code generator took 7.4 s of it. Test code only drives the product's -O2 code; what
#     it checks does not depend on how fast its own lines run.
#   - A precompiled header of the third-party and standard headers test files include
#     (cmake/test_pch.h: GoogleTest, GoogleMock, Abseil, nlohmann_json): parsing them took about
#     a third of the rest. Two are built per build tree, one for executables (-fPIE) and one
#     for libraries (-fPIC), since clang refuses a header built with the other; every test
#     target reuses the matching one (REUSE_FROM). A target's own -D definitions do not matter
#     to clang or GCC as long as the header does not use those macros, which it does not.
# OFF by default: with a precompiled header, a test file that forgot one of those includes would
# still compile. scripts/test.sh turns it on for CI's three test builds; a developer's default
# build and the package build leave it off.
option(REGISTRY_FAST_TEST_BUILD
       "Compile test code at -O0 against a precompiled header (faster test builds)" OFF)

# Every target defined in `dir` and the folders below it, into `out`.
function(registry_targets_below dir out)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir ${subdirs})
    registry_targets_below(${subdir} below)
    list(APPEND targets ${below})
  endforeach()
  set(${out} ${targets} PARENT_SCOPE)
endfunction()

# TRUE if `target` is test code (see above) with C++ files of its own.
function(registry_is_compiled_test_code target out)
  set(${out} FALSE PARENT_SCOPE)
  get_target_property(type ${target} TYPE)
  get_target_property(sources ${target} SOURCES)
  get_target_property(dir ${target} SOURCE_DIR)
  file(RELATIVE_PATH relative ${PROJECT_SOURCE_DIR} ${dir})
  if(type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY)$" AND
     sources MATCHES "\\.cc(;|$)" AND relative MATCHES "^(tests|integration)(/|$)")
    set(${out} TRUE PARENT_SCOPE)
  endif()
endfunction()

# The target whose precompiled header test targets of position-independence `code` (pic or
# pie) reuse: an object library of one empty file, compiled with the flags of such targets.
function(registry_add_test_pch code)
  set(anchor registry_test_pch_${code})
  add_library(${anchor} OBJECT ${PROJECT_SOURCE_DIR}/cmake/test_pch_anchor.cc)
  target_link_libraries(${anchor} PRIVATE registry_base absl::status absl::statusor
                        absl::strings absl::synchronization absl::time
                        nlohmann_json::nlohmann_json GTest::gmock GTest::gtest)
  target_compile_options(${anchor} PRIVATE -O0)
  if(code STREQUAL "pie")  # as CMake compiles an executable's files
    set_target_properties(${anchor} PROPERTIES POSITION_INDEPENDENT_CODE OFF)
    target_compile_options(${anchor} PRIVATE -fPIE)
  endif()
  target_precompile_headers(${anchor} PRIVATE ${PROJECT_SOURCE_DIR}/cmake/test_pch.h)
endfunction()

# C files compile as they are: the header is C++ (and a C target's -std differs).
function(registry_skip_pch_for_c target)
  get_target_property(sources ${target} SOURCES)
  list(FILTER sources INCLUDE REGEX "\\.c$")
  # Every executable of the ASan build gets this one through an interface (CMakeLists.txt).
  list(APPEND sources ${PROJECT_SOURCE_DIR}/cmake/asan_default_options.c)
  set_source_files_properties(${sources} TARGET_DIRECTORY ${target}
                              PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
endfunction()

function(registry_fast_test_build)
  if(NOT REGISTRY_FAST_TEST_BUILD OR REGISTRY_RUNTIME_ONLY)
    return()  # a runtime-only build has no test code
  endif()
  if(REGISTRY_FUZZ OR REGISTRY_HARDENING)
    # Fuzz targets (tests/fuzz) need their optimiser; _FORTIFY_SOURCE refuses -O0.
    message(FATAL_ERROR "REGISTRY_FAST_TEST_BUILD is for test builds: it cannot be combined "
                        "with REGISTRY_FUZZ or REGISTRY_HARDENING")
  endif()
  registry_add_test_pch(pic)
  registry_add_test_pch(pie)
  registry_targets_below(${PROJECT_SOURCE_DIR} targets)
  foreach(target ${targets})
    registry_is_compiled_test_code(${target} is_test_code)
    if(NOT is_test_code)
      continue()
    endif()
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-O0>)
    get_target_property(type ${target} TYPE)
    set(code pic)
    if(type STREQUAL "EXECUTABLE")
      set(code pie)
    endif()
    target_precompile_headers(${target} REUSE_FROM registry_test_pch_${code})
    # GCC uses a header only where every macro it was built with is defined the same way: the
    # one GoogleTest's targets define (the value gtest-port.h picks on Linux anyway) is defined
    # for the test targets that do not link GoogleTest too.
    target_compile_definitions(${target} PRIVATE GTEST_HAS_PTHREAD=1)
    registry_skip_pch_for_c(${target})
  endforeach()
endfunction()

registry_fast_test_build()

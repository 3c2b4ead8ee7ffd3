# SPDX-License-Identifier: Apache-2.0
# Included by the top-level CMakeLists.txt when REGISTRY_RUNTIME_ONLY is ON: keeps, of the folder
# list `registry_dirs`, those that build what ships. Tests, integration harnesses, fuzz targets
# and benchmarks are left out, so GoogleTest, Google Benchmark, clang and python are not needed.
#
# The plugin and the loader need curl, Abseil, nlohmann-json and yaml-cpp only (required above).
# registryctl also needs gflags; consul-dev-server needs gflags and Boost's headers. When one of
# those is missing the tool is left out with a message, and the rest still builds and installs.
set(registry_runtime_dirs base consul conf registry watch repository lock instance plugin
                          host plugin/java)
if(NOT gflags_FOUND)
  message(STATUS "registry runtime-only: gflags not found (Debian: libgflags-dev), "
                 "so registryctl and consul-dev-server are not built")
elseif(NOT Boost_FOUND)
  message(STATUS "registry runtime-only: Boost >= 1.74 headers not found (Debian: libboost-dev), "
                 "so consul-dev-server is not built")
endif()
if(gflags_FOUND AND Boost_FOUND)
  list(APPEND registry_runtime_dirs devserver)
endif()
if(gflags_FOUND)
  list(APPEND registry_runtime_dirs tools)
endif()
# Keep the dependency order of the full list.
set(registry_kept)
foreach(dir ${registry_dirs})
  if(dir IN_LIST registry_runtime_dirs)
    list(APPEND registry_kept ${dir})
  endif()
endforeach()
set(registry_dirs ${registry_kept})
message(STATUS "registry runtime-only: building ${registry_dirs}")

# SPDX-License-Identifier: Apache-2.0
# Registers the GoogleTest cases of `target`, which need no server of any kind (no Consul, no dev
# server, no network but loopback sockets the test makes itself), under the ctest label "unit",
# plus any LABELS given: `ctest -L unit` runs them all in seconds.
function(registry_discover_unit_tests target)
  cmake_parse_arguments(ARG "" "" "LABELS" ${ARGN})
  set(labels unit ${ARG_LABELS})
  gtest_discover_tests(${target} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${labels}")
endfunction()

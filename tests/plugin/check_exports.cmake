# SPDX-License-Identifier: Apache-2.0
# Asserts that the shared library PLUGIN exports exactly one defined dynamic symbol, the ABI's
# init function. Run as: cmake -DNM=<nm> -DPLUGIN=<path> -P check_exports.cmake
execute_process(COMMAND ${NM} -D --defined-only ${PLUGIN}
                OUTPUT_VARIABLE symbols RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${NM} -D --defined-only ${PLUGIN} failed (${rc}): ${err}")
endif()
string(STRIP "${symbols}" symbols)
string(REPLACE "\n" ";" lines "${symbols}")
list(LENGTH lines count)
if(NOT count EQUAL 1 OR NOT lines MATCHES "^[0-9a-f]+ T RegistryPluginInit$")
  message(FATAL_ERROR "${PLUGIN} must export exactly 'T RegistryPluginInit'; "
                      "nm -D --defined-only lists ${count}:\n${symbols}")
endif()
message(STATUS "${PLUGIN} exports only RegistryPluginInit")

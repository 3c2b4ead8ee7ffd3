# SPDX-License-Identifier: Apache-2.0
# CPACK_PROJECT_CONFIG_FILE: cpack reads it before making packages (cmake/package.cmake). The
# Maintainer field needs a real contact, which only the packager can give.
if("${CPACK_PACKAGE_CONTACT}" STREQUAL "")
  message(FATAL_ERROR "registry-consul: no package maintainer. Configure with "
                      "-DREGISTRY_PACKAGE_MAINTAINER=\"Name <address>\", or set DEBFULLNAME and "
                      "DEBEMAIL before configuring (packaging/README.md)")
endif()

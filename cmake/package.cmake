# SPDX-License-Identifier: Apache-2.0
# CPack: `cpack -G DEB` in a build tree makes two Debian packages from the install rules'
# components (cmake/install.cmake), meant for the runtime-only build (docs/install.md):
#   registry-consul      (component runtime) the plugin, registryctl, consul-dev-server, the
#                        ShardingSphere bridge, the docs and the copyright: what a host runs
#   registry-consul-dev  (component dev) the headers, the static loader, the CMake package and
#                        the pkg-config file: what building a host needs; Depends on the first
# Included last by the top-level CMakeLists.txt, after install.cmake; it adds no build target.
#
# Who makes the packages, and where the project lives, are the packager's to say: the project has
# no public address or web site of its own, and a made-up one would be a lie in every package
# (packaging/README.md). The maintainer defaults to Debian's convention for the person building a
# package, DEBFULLNAME and DEBEMAIL (as dch uses them); without one, cpack refuses to make
# packages (cmake/cpack_checks.cmake). No homepage: the packages have no Homepage field.
set(registry_default_maintainer "")
if(DEFINED ENV{DEBEMAIL} AND NOT "$ENV{DEBEMAIL}" STREQUAL "")
  if("$ENV{DEBEMAIL}" MATCHES "<" OR "$ENV{DEBFULLNAME}" STREQUAL "")
    set(registry_default_maintainer "$ENV{DEBEMAIL}")  # already "Name <address>", or no name
  else()
    set(registry_default_maintainer "$ENV{DEBFULLNAME} <$ENV{DEBEMAIL}>")
  endif()
endif()
set(REGISTRY_PACKAGE_MAINTAINER "${registry_default_maintainer}"
    CACHE STRING "Maintainer of the Debian packages, 'Name <address>' (default: DEBFULLNAME <DEBEMAIL>)")
set(REGISTRY_HOMEPAGE "" CACHE STRING
    "Homepage of the Debian packages and the jars' pom (default: none)")

# The Debian revision and the changelog come from packaging/changelog, whose first entry must be
# this version: "registry-consul (0.1.0-1) unstable; ...".
set(registry_changelog ${PROJECT_SOURCE_DIR}/packaging/changelog)
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${registry_changelog})
file(STRINGS ${registry_changelog} registry_changelog_top LIMIT_COUNT 1)
if(registry_changelog_top MATCHES "^${REGISTRY_PACKAGE_NAME} \\(([^-)]+)-([^)]+)\\)")
  set(registry_changelog_upstream ${CMAKE_MATCH_1})
  set(CPACK_DEBIAN_PACKAGE_RELEASE ${CMAKE_MATCH_2})
else()
  message(FATAL_ERROR "packaging/changelog: the first line is not "
                      "'${REGISTRY_PACKAGE_NAME} (<version>-<revision>) ...'")
endif()
if(NOT registry_changelog_upstream STREQUAL PROJECT_VERSION)
  message(WARNING "packaging/changelog: its latest entry is ${registry_changelog_upstream}, the "
                  "project is ${PROJECT_VERSION}: add an entry before making packages")
endif()
# Debian wants changelogs and manual pages compressed with gzip -9n (no name, no time: the same
# bytes from every build). Made at configure time, so the install rules add no build target.
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/packaging)
function(registry_gzip source output)
  execute_process(COMMAND gzip -9 -n -c ${source} OUTPUT_FILE ${output} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "gzip -9 -n ${source} failed: ${result}")
  endif()
endfunction()

# The tools' manual pages, for the tools this build has.
foreach(tool registryctl consul-dev-server)
  if(TARGET ${tool})
    configure_file(${PROJECT_SOURCE_DIR}/packaging/man/${tool}.1.in
                   ${PROJECT_BINARY_DIR}/packaging/${tool}.1 @ONLY)
    registry_gzip(${PROJECT_BINARY_DIR}/packaging/${tool}.1
                  ${PROJECT_BINARY_DIR}/packaging/${tool}.1.gz)
    install(FILES ${PROJECT_BINARY_DIR}/packaging/${tool}.1.gz
            DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT runtime)
  endif()
endforeach()

# Each package's doc directory has the changelog; only the packages get it: EXCLUDE_FROM_ALL
# keeps it out of a plain `cmake --install`, while cpack installs each component by name.
set(registry_changelog_gz ${PROJECT_BINARY_DIR}/packaging/changelog.Debian.gz)
# Its trailer names the maintainer (@REGISTRY_PACKAGE_MAINTAINER@), as the control file does.
configure_file(${registry_changelog} ${PROJECT_BINARY_DIR}/packaging/changelog @ONLY)
registry_gzip(${PROJECT_BINARY_DIR}/packaging/changelog ${registry_changelog_gz})
set(registry_dev_docdir ${CMAKE_INSTALL_DATAROOTDIR}/doc/${REGISTRY_PACKAGE_NAME}-dev)
install(FILES ${registry_changelog_gz} DESTINATION ${REGISTRY_INSTALL_DOCDIR} COMPONENT runtime
        EXCLUDE_FROM_ALL)
install(FILES ${registry_changelog_gz} ${PROJECT_SOURCE_DIR}/packaging/copyright
        DESTINATION ${registry_dev_docdir} COMPONENT dev EXCLUDE_FROM_ALL)

set(CPACK_PACKAGE_NAME ${REGISTRY_PACKAGE_NAME})
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT ${REGISTRY_PACKAGE_MAINTAINER})
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL runtime dev)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # <name>_<version>-<revision>_<arch>.deb
if(NOT REGISTRY_HOMEPAGE STREQUAL "")
  set(CPACK_DEBIAN_PACKAGE_HOMEPAGE ${REGISTRY_HOMEPAGE})
endif()
# Checked when cpack runs, not at configure time: only making packages needs a maintainer.
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_SOURCE_DIR}/cmake/cpack_checks.cmake)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${REGISTRY_PACKAGE_NAME})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION net)
# The first line is the synopsis; CPack indents the others. Lines stay under 80 columns.
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION
    "Consul registry plugin for a sharding middleware's cluster mode
libregistry_consul.so, loaded by hosts through a versioned C ABI, keeps a
middleware's cluster metadata in Consul: persisted and ephemeral keys,
watches, locks, fair locks, semaphores and read/write locks.
.
Also registryctl, a command-line host of the plugin, consul-dev-server, a
Consul-compatible server for development and tests, and, when built with a
JDK, the ShardingSphere bridge (a jar and its JNI library).")
# Depends from the shared libraries the binaries link (dpkg-shlibdeps, from dpkg-dev): libcurl,
# Abseil, yaml-cpp, gflags, libstdc++, ... as the build machine's Debian names them.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS ON)
# The plugin has a SONAME in a directory of the dynamic loader: Debian wants a shlibs file naming
# the package that provides it, and the ldconfig trigger (packaging/triggers) on install and
# removal. CPack 3.25 also writes postinst/postrm scripts calling ldconfig (docs/install.md).
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/packaging/triggers)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

set(CPACK_DEBIAN_DEV_PACKAGE_NAME ${REGISTRY_PACKAGE_NAME}-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_DESCRIPTION
    "Consul registry plugin for a sharding middleware - development files
The C ABI header of the Consul registry plugin, and the host-side loader and
C++ wrapper (static libraries and their headers) with a CMake package
(find_package(RegistryConsul)) and a pkg-config file (registry-consul).")
# The exact version: the headers and the CMake package (which names the plugin's path) belong to
# the plugin of the same build. libabsl-dev: the C++ headers include Abseil's, and the CMake
# package and registry-consul.pc find Abseil's.
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "${REGISTRY_PACKAGE_NAME} (= ${PROJECT_VERSION}-${CPACK_DEBIAN_PACKAGE_RELEASE}), libabsl-dev")

# The plugin and the tools go in stripped (the static archives keep their symbols).
set(CPACK_STRIP_FILES ON)
include(CPack)

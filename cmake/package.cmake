# CPack: `cpack -G DEB` in a build tree makes registry-consul_<version>_<arch>.deb from what
# `cmake --install` installs (meant for the runtime-only build, docs/install.md). Included last by
# the top-level CMakeLists.txt; it adds no build target.
set(CPACK_PACKAGE_NAME registry-consul)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "Consul registry plugin for a sharding middleware's cluster mode")
set(REGISTRY_PACKAGE_MAINTAINER "registry-consul maintainers <registry-consul@localhost>"
    CACHE STRING "Maintainer field of the .deb")
set(CPACK_PACKAGE_CONTACT ${REGISTRY_PACKAGE_MAINTAINER})
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # registry-consul_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION net)
# CPack puts the summary first and indents these lines.
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "libregistry_consul.so, loaded by hosts through a versioned C ABI: persisted and
ephemeral keys, watches, locks, fair locks, semaphores and read/write locks on
Consul. Also the C ABI header, the host-side loader and C++ wrapper (static, with
a CMake package and a pkg-config file), registryctl, and consul-dev-server, the
Consul-compatible server for development.")
# The plugin and the tools go in stripped (the static archives keep their symbols).
set(CPACK_STRIP_FILES ON)
# Depends from the shared libraries the binaries link (dpkg-shlibdeps, from dpkg-dev): libcurl,
# Abseil, yaml-cpp, gflags, libstdc++, ... as the build machine's Debian names them.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Hosts building against the headers and the static loader also need Abseil's headers.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libabsl-dev")
include(CPack)

# SPDX-License-Identifier: Apache-2.0
# Install rules (`cmake --install`), the exported CMake package (find_package(RegistryConsul
# CONFIG)) and the pkg-config file. Included last by the top-level CMakeLists.txt; it only reads
# the targets the folders made, so the normal and the runtime-only build install what they built.
# Layout and use: docs/install.md.
#
# Every rule names its component, the Debian package it lands in (cmake/package.cmake): `runtime`
# (registry-consul: what a production host runs) or `dev` (registry-consul-dev: what building a
# host needs). `cmake --install` without --component installs both.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# Hosts include the headers as "host/loader.h", "registry/repository.h", ...: the project's
# include root, kept under a directory of its own so no generic folder lands in include/.
set(REGISTRY_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/registry_consul)
set(REGISTRY_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/RegistryConsul)
# The runtime package's name: Debian wants its docs and copyright in share/doc/<package>.
set(REGISTRY_PACKAGE_NAME registry-consul)
set(REGISTRY_INSTALL_DOCDIR ${CMAKE_INSTALL_DATAROOTDIR}/doc/${REGISTRY_PACKAGE_NAME})

# The plugin. Its file version follows the project; SOVERSION is the major (0 while 0.x). Hosts
# load it by the unversioned name (host/loader.h), so the namelink ships with it. The C ABI
# has a version of its own, negotiated by RegistryPluginInit (plugin/registry_plugin.h).
set_target_properties(registry_consul PROPERTIES VERSION ${PROJECT_VERSION}
                                                 SOVERSION ${PROJECT_VERSION_MAJOR})
install(TARGETS registry_consul LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime)

# The ShardingSphere bridge (docs/shardingsphere.md), when a JDK built it: the glue beside the
# plugin, where it looks for the plugin first, and the jars (one per ShardingSphere version) in
# Debian's place for jars.
if(TARGET registry_consul_shardingsphere)
  install(TARGETS registry_consul_jni LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          COMPONENT runtime)
  get_property(registry_shardingsphere_jars GLOBAL PROPERTY REGISTRY_SHARDINGSPHERE_JARS)
  install(FILES ${registry_shardingsphere_jars} DESTINATION ${CMAKE_INSTALL_DATADIR}/java
          COMPONENT runtime)
endif()

# The loader looks for plugins in <executable dir>/../lib; an installed tool also needs
# ../<libdir> when GNUInstallDirs picks another one (lib/x86_64-linux-gnu under /usr on Debian).
if(NOT IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  target_compile_definitions(registry_plugin_loader
                             PRIVATE REGISTRY_PLUGIN_INSTALL_LIBDIR="${CMAKE_INSTALL_LIBDIR}")
endif()

# The host side: the loader and C++ wrapper, a static library (so a host links no shared library
# of ours), with every static library of the project it links (found by walking its link
# interface, so a new dependency ships without an edit here) and the Abseil targets it needs.
set(registry_link_queue registry_plugin_loader)
set(registry_loader_archives)  # link order: each before the ones it needs
set(registry_loader_absl)
while(registry_link_queue)
  list(POP_FRONT registry_link_queue lib)
  string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" lib "${lib}")
  if(lib MATCHES "^absl::" AND NOT lib IN_LIST registry_loader_absl)
    list(APPEND registry_loader_absl ${lib})
  endif()
  if(NOT TARGET ${lib} OR lib MATCHES "::")
    continue()
  endif()
  get_target_property(type ${lib} TYPE)
  if(type STREQUAL "STATIC_LIBRARY")
    list(REMOVE_ITEM registry_loader_archives ${lib})  # needed later in the order too
    list(APPEND registry_loader_archives ${lib})
  endif()
  get_target_property(deps ${lib} INTERFACE_LINK_LIBRARIES)
  if(deps)
    list(APPEND registry_link_queue ${deps})
  endif()
endwhile()
install(TARGETS ${registry_loader_archives} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        COMPONENT dev)
# For the package's config files: imported targets, pkg-config flags and Requires.
set(REGISTRY_LOADER_LIBS)
set(REGISTRY_PC_LIBS)
foreach(lib ${registry_loader_archives})
  list(APPEND REGISTRY_LOADER_LIBS
       ${CMAKE_STATIC_LIBRARY_PREFIX}${lib}${CMAKE_STATIC_LIBRARY_SUFFIX})
  string(APPEND REGISTRY_PC_LIBS " -l${lib}")
endforeach()
list(SORT registry_loader_absl)
set(REGISTRY_LOADER_ABSL ${registry_loader_absl})
string(REPLACE "absl::" "absl_" REGISTRY_PC_REQUIRES "${registry_loader_absl}")
string(REPLACE ";" " " REGISTRY_PC_REQUIRES "${REGISTRY_PC_REQUIRES}")

# Public headers: the C ABI, the loader and the C++ wrapper, plus every project header they
# include (followed here, so a new include can never leave an installed header dangling).
set(registry_public_headers plugin/registry_plugin.h host/loader.h host/plugin_client.h
                            host/plugin_handles.h)
set(registry_header_queue ${registry_public_headers})
set(registry_installed_headers)
while(registry_header_queue)
  list(POP_FRONT registry_header_queue header)
  if(header IN_LIST registry_installed_headers)
    continue()
  endif()
  list(APPEND registry_installed_headers ${header})
  file(STRINGS ${PROJECT_SOURCE_DIR}/${header} includes REGEX "^#include \"[^\"]+\"")
  foreach(line ${includes})
    string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" included "${line}")
    if(EXISTS ${PROJECT_SOURCE_DIR}/${included})
      list(APPEND registry_header_queue ${included})
    endif()
  endforeach()
endwhile()
foreach(header ${registry_installed_headers})
  get_filename_component(dir ${header} DIRECTORY)
  install(FILES ${PROJECT_SOURCE_DIR}/${header} DESTINATION ${REGISTRY_INSTALL_INCLUDEDIR}/${dir}
          COMPONENT dev)
endforeach()
# Re-configure when a header's includes change.
list(TRANSFORM registry_installed_headers PREPEND ${PROJECT_SOURCE_DIR}/
     OUTPUT_VARIABLE registry_header_paths)
set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
             ${registry_header_paths})

# The tools, where this build has them (runtime-only may leave them out). They link no shared
# library of ours (the loader is static) and reach the plugin through the loader's search path,
# so they need no RPATH.
foreach(tool registryctl consul-dev-server)
  if(TARGET ${tool})
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT runtime)
  endif()
endforeach()

# Documentation and examples, in the repository's relative layout so the READMEs' links hold.
# Of conf/examples only the YAML and its README ship: the token and TLS files secure.yaml names
# are the operator's own (conf/examples/README.md says how to make test ones).
install(FILES README.md packaging/copyright DESTINATION ${REGISTRY_INSTALL_DOCDIR}
        COMPONENT runtime)
file(GLOB registry_docs ${PROJECT_SOURCE_DIR}/docs/*.md)
install(FILES ${registry_docs} DESTINATION ${REGISTRY_INSTALL_DOCDIR}/docs COMPONENT runtime)
install(FILES conf/README.md DESTINATION ${REGISTRY_INSTALL_DOCDIR}/conf COMPONENT runtime)
install(FILES plugin/README.md DESTINATION ${REGISTRY_INSTALL_DOCDIR}/plugin COMPONENT runtime)
install(DIRECTORY conf/examples DESTINATION ${REGISTRY_INSTALL_DOCDIR}/conf COMPONENT runtime
        FILES_MATCHING PATTERN "*.yaml" PATTERN "README.md")
# The alerting rules and the Grafana dashboard, for operators to load (monitoring/README.md).
install(FILES monitoring/README.md monitoring/alerts.yaml monitoring/dashboard.json
        DESTINATION ${REGISTRY_INSTALL_DOCDIR}/monitoring COMPONENT runtime)

# find_package(RegistryConsul CONFIG): hand-written imported targets (cmake/
# RegistryConsulConfig.cmake.in), since the build's own targets carry the source tree as their
# include root and the project's warning flags, which must not reach a host.
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/RegistryConsulConfig.cmake.in
  ${PROJECT_BINARY_DIR}/RegistryConsulConfig.cmake
  INSTALL_DESTINATION ${REGISTRY_INSTALL_CMAKEDIR}
  PATH_VARS REGISTRY_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_BINDIR)
# 0.x: every 0.y satisfies a request for 0.x; the C ABI's own version is checked at load time.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/RegistryConsulConfigVersion.cmake
                                 COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/RegistryConsulConfig.cmake
              ${PROJECT_BINARY_DIR}/RegistryConsulConfigVersion.cmake
        DESTINATION ${REGISTRY_INSTALL_CMAKEDIR} COMPONENT dev)

# registry-consul.pc, relocatable: its prefix is found from its own directory (${pcfiledir}).
if(NOT IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}" AND NOT IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  file(RELATIVE_PATH REGISTRY_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/registry-consul.pc.in
                 ${PROJECT_BINARY_DIR}/registry-consul.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/registry-consul.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
else()
  message(STATUS "registry: absolute install directories, registry-consul.pc not installed")
endif()

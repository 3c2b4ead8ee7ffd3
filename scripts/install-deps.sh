#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian packages this project needs, then fetches the real Consul the integration
# tests run against (scripts/get-consul.sh; it fails, and so does this script, when Consul cannot
# be obtained). Idempotent: installs nothing when every package is present; runs `apt-get update`
# only when something is missing. Needs root (or sudo) only when it has to install packages.
#
#   scripts/install-deps.sh                        everything: build, test, fuzz, bench, format,
#                                                  package, the Java bridge, and real Consul
#   scripts/install-deps.sh --quickstart           only what the quickstart demo's targets need
#                                                  (registryctl, the plugin, consul-dev-server):
#                                                  no test, fuzz, bench, Java or clang package,
#                                                  and no Consul
#   scripts/install-deps.sh --quickstart --consul  that, plus real Consul for `quickstart.sh --consul`
set -euo pipefail

profile=all
with_consul=true
for arg in "$@"; do
  case "$arg" in
    --quickstart) profile=quickstart; with_consul=false ;;
    --consul) with_consul=true ;;
    *) echo "install-deps: unknown argument '$arg' (--quickstart [--consul])" >&2; exit 2 ;;
  esac
done

# What the plugin, the loader, registryctl and consul-dev-server need to build (the
# REGISTRY_RUNTIME_ONLY configuration, docs/install.md).
quickstart_packages=(
  build-essential cmake ninja-build
  libcurl4-openssl-dev      # client transport
  libabsl-dev               # Status, Mutex, Time, strings, containers
  nlohmann-json3-dev        # JSON
  libgflags-dev             # CLI flags
  libyaml-cpp-dev           # registry YAML
  libboost-dev              # Asio/Beast headers for the dev server
)
# What fetching and starting a real Consul needs (scripts/get-consul.sh, the demo's --consul).
consul_packages=(
  debian-archive-keyring dpkg # get-consul.sh: verify and unpack the consul package
  python3                   # free ports and readiness of the demo's agent
)
other_packages=(
  pkg-config git
  libgtest-dev libgmock-dev # tests
  libbenchmark-dev          # benchmarks
  clang-format              # format check
  clang-14 libclang-rt-14-dev clang # test builds (scripts/test.sh) and fuzz targets (libFuzzer)
  python3-consul            # third-party client check against the dev server
  python3-prometheus-client # the metrics test parses the exposition with its parser
  procps                    # ps/pkill used by integration scripts
  openssl                   # certificates of the TLS test agent (integration/testing/test_pki.h)
  file                      # cpack -G DEB: its Depends (dpkg-shlibdeps) needs file to spot binaries
  lintian                   # package-test.sh checks both .deb files with it (fails on an error)
  devscripts unzip          # package-test.sh: hardening-check on every shipped ELF file, the
                            # native libraries inside the jars included
  ccache                    # package-test.sh: its second (reproducibility) build reuses the
                            # first one's objects
  prometheus                # promtool: the alerting rules' check and unit tests (monitoring/)
  python3-yaml              # monitoring/check_queries.py reads the alerting rules
  iproute2 nftables         # partition tests: network namespaces, veth links, drop rules
  openjdk-17-jdk-headless maven # the ShardingSphere bridge (plugin/java: Maven fetches
                            # ShardingSphere's jars and JUnit from Maven Central)
)

packages=("${quickstart_packages[@]}")
$with_consul && packages+=("${consul_packages[@]}")
[ "$profile" = quickstart ] || packages+=("${other_packages[@]}")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present ($profile profile)"
else
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if $with_consul; then
  bash "$(dirname "$0")/get-consul.sh"
fi

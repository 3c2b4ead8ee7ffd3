#!/usr/bin/env bash
# Installs exactly the Debian packages this project needs to build, test and format-check, then
# fetches the real Consul the integration tests run against (scripts/get-consul.sh; it fails, and
# so does this script, when Consul cannot be obtained). Idempotent: installs nothing when every
# package is present; runs `apt-get update` only when something is missing. Needs root (or sudo)
# only when it has to install packages.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libcurl4-openssl-dev      # client transport
  libabsl-dev               # Status, Mutex, Time, strings, containers
  nlohmann-json3-dev        # JSON
  libgflags-dev             # CLI flags
  libyaml-cpp-dev           # registry YAML
  libgtest-dev libgmock-dev # tests
  libbenchmark-dev          # benchmarks
  libboost-dev              # Asio/Beast headers for the dev server
  clang-format              # format check
  clang-14 libclang-rt-14-dev clang # fuzz targets (libFuzzer, scripts/fuzz.sh)
  python3 python3-consul    # third-party client check against the dev server
  python3-prometheus-client # the metrics test parses the exposition with its parser
  procps                    # ps/pkill used by integration scripts
  debian-archive-keyring dpkg # get-consul.sh: verify and unpack the consul package
  openssl                   # certificates of the TLS test agent (integration/testing/test_pki.h)
  file                      # cpack -G DEB: its Depends (dpkg-shlibdeps) needs file to spot binaries
  iproute2 nftables         # partition tests: network namespaces, veth links, drop rules
  openjdk-17-jdk-headless junit5 # the ShardingSphere bridge (plugin/java) and its JUnit 5 tests
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -q
  "${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
bash "$(dirname "$0")/get-consul.sh"

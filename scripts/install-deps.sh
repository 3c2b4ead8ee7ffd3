#!/usr/bin/env bash
# Installs exactly the Debian packages this project needs to build, test and format-check.
# Idempotent: does nothing when every package is already installed; runs `apt-get update`
# only when something is missing. Needs root (or sudo) when it has to install.
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
  python3 python3-consul    # third-party client check against the dev server
  procps                    # ps/pkill used by integration scripts
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -q
"${sudo_cmd[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"

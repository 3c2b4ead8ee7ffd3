#!/usr/bin/env bash
# Quickstart: installs dependencies, builds, and runs the cluster-mode demo against the embedded
# Consul-compatible dev server (started on a free port, stopped at the end).
#   scripts/quickstart.sh --consul   the same demo against a real consul agent -dev (Consul 1.8.7,
#                                    fetched by install-deps; or $REGISTRY_TEST_CONSUL_BIN)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)"
if [ -x tools/quickstart/demo.sh ]; then
  exec bash tools/quickstart/demo.sh "$@" build
fi
echo "quickstart: the build works; the cluster-mode demo arrives with the repository (registry/) work."

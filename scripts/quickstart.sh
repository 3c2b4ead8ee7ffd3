#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Quickstart: installs the few Debian packages the demo needs, builds only what it runs
# (registryctl, the plugin it loads, consul-dev-server), and runs the cluster-mode demo against the
# embedded Consul-compatible dev server (started on a free port, stopped at the end).
#   scripts/quickstart.sh --consul   the same demo against a real consul agent -dev (Consul 1.8.7,
#                                    fetched by install-deps; or $REGISTRY_TEST_CONSUL_BIN)
# A fresh build/ is configured runtime-only (REGISTRY_RUNTIME_ONLY: no test, benchmark or fuzz
# target, so no GoogleTest or Benchmark needed); an existing build/ keeps its configuration.
# scripts/test.sh builds and runs everything, from scratch.
set -euo pipefail
cd "$(dirname "$0")/.."
deps=(--quickstart)
[ "${1:-}" != --consul ] || deps+=(--consul)
bash scripts/install-deps.sh "${deps[@]}"
configure=(-G Ninja -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo)
[ -f build/CMakeCache.txt ] || configure+=(-DREGISTRY_RUNTIME_ONLY=ON)
cmake "${configure[@]}" >/dev/null
cmake --build build -j "$(nproc)" --target registryctl registry_consul consul-dev-server
exec bash tools/quickstart/demo.sh "$@" build

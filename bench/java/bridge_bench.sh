#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The ShardingSphere bridge next to the plugin's C ABI, on one server, in one run: starts the
# server (a dev server process, or a real `consul agent -dev` for `consul`) once, measures the C ABI
# in this process and the bridge in a JVM against it, and prints one JSON object: a `c_abi` and a
# `bridge` object (persist and query ops/s, and p50/p90/p99/max latency of persist, query and write
# -> watch event), and `ratios_bridge_to_c_abi`. Builds nothing; build first with
#   cmake --build build --target bridge_bench
#   bench/java/bridge_bench.sh [dev|consul|HOST:PORT] [--ops=5000] [--watch_writes=1000]
#                              [--warmup_percent=20] [--value_bytes=100] [--rounds=4]
#                              [--jvm_options='...']
# BUILD_DIR (default: build, relative to the repository root) names the build to run.
set -euo pipefail
cd "$(dirname "$0")/../.."

server=dev
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  server=$1
  shift
fi
exe=${BUILD_DIR:-build}/bin/bridge_bench
if [ ! -x "$exe" ]; then
  echo "bridge_bench.sh: $exe is missing: build it first (cmake --build ... --target" \
    "bridge_bench; it exists only where the ShardingSphere bridge is built: a JDK 17)" >&2
  exit 1
fi
exec "$exe" --server="$server" "$@"

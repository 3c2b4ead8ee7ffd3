#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# CI's benchmark smoke test: runs kv_bench, lock_bench, watch_bench, backup_bench (and bridge_bench
# where the ShardingSphere bridge is built) of an existing build once each, at their smallest sizes,
# against the dev server, and fails unless every one exits 0 and prints exactly one JSON object
# on stdout. It checks that the drivers still run, not their numbers. Builds nothing; takes seconds.
#   scripts/bench-smoke.sh [BUILD_DIR]    (default: build; relative to the repository root)
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${1:-build}/bin
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failures=0

# check_one NAME ARGS...: runs $bin/NAME with ARGS and checks what it printed.
check_one() {
  local name=$1
  shift
  local exe=$bin/$name started=$SECONDS code=0
  if [ ! -x "$exe" ]; then
    echo "bench-smoke: $exe is missing: build it first (cmake --build ... --target $name)"
    failures=$((failures + 1))
    return
  fi
  # A bound, so that a driver that hangs fails the run instead of stalling CI.
  timeout 120 "$exe" "$@" >"$scratch/$name.out" 2>"$scratch/$name.err" || code=$?
  if [ "$code" -ne 0 ]; then
    echo "bench-smoke: FAILED $name $* (exit code $code); its stderr ends with:"
    tail -n 20 "$scratch/$name.err"
    failures=$((failures + 1))
  elif ! /usr/bin/python3 -c '
import json, sys
try:
    value = json.load(sys.stdin)  # refuses anything but exactly one JSON document
except ValueError as error:
    sys.exit(f"not JSON: {error}")
sys.exit(0 if isinstance(value, dict) else "JSON, but not an object")' <"$scratch/$name.out"; then
    echo "bench-smoke: FAILED $name $*: stdout is not one JSON object; it starts with:"
    head -c 2000 "$scratch/$name.out"
    echo
    failures=$((failures + 1))
  else
    echo "bench-smoke: ok $name $* ($((SECONDS - started)) s)"
  fi
}

check_one kv_bench --server=dev --ops=50 --rounds=1
check_one lock_bench --server=dev --cycles=1 --handoffs=1 --settle_ms=1
# "latency" is watch_bench's short part ("scale" parks 10,000 watches); 20 writes per case.
check_one watch_bench latency dev --writes=20
# registryctl export and import of 100 keys (the real binary), 2 ephemeral keys left out.
check_one backup_bench --server=dev --keys=100 --ephemeral=2 --rounds=1
# bridge_bench exists only where the ShardingSphere bridge is built (a JDK 17): checked there.
if compgen -G "${1:-build}/plugin/java/maven/*/registry-consul-for-shardingsphere-*.jar" >/dev/null; then
  check_one bridge_bench --server=dev --ops=50 --watch_writes=20 --rounds=1
fi

if [ "$failures" -ne 0 ]; then
  echo "bench-smoke: $failures driver(s) failed"
  exit 1
fi
echo "bench-smoke: every driver printed one JSON object"

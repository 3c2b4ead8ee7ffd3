#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The long fault runs against real Consul (outside the per-commit CI, which runs the short
# versions through ctest): the leader of a 3-server cluster killed every 20 s for 2 minutes, then
# a single server crashed and restarted, then paused past two TTLs, each repeated RUNS times
# (default 5). Stops at the first failing run. Usage: scripts/fault-runs.sh [RUNS] [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
build=${2:-build}
if [ ! -x "$build/bin/cluster_faults_test" ]; then
  cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" --target cluster_faults_test
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for run in $(seq 1 "$runs"); do
  echo "fault-runs: run $run of $runs"
  status=0
  REGISTRY_FAULT_KILLS=6 REGISTRY_FAULT_KILL_EVERY_SECONDS=20 \
    "$build/bin/cluster_faults_test" >"$log" 2>&1 || status=$?
  # The figures, without the agents' logs (printed only when a run fails).
  grep -E 'leader kills|server down|writes |^  20|watch converged|an election took|^checked|OK \]|FAILED|Failure' \
    "$log" || true
  if [ "$status" -ne 0 ]; then
    echo "fault-runs: run $run failed; its whole output:"
    cat "$log"
    exit 1
  fi
done
# The same under load: 32 instances (32 lock clients contending, 32 writers) and 197 watched keys.
for run in $(seq 1 "$runs"); do
  echo "fault-runs: loaded run $run of $runs"
  status=0
  REGISTRY_FAULT_KILLS=6 REGISTRY_FAULT_KILL_EVERY_SECONDS=20 REGISTRY_FAULT_INSTANCES=32 \
    REGISTRY_FAULT_KEYS_PER_INSTANCE=6 \
    "$build/bin/cluster_faults_test" --gtest_filter='LeaderElectionTest.*' >"$log" 2>&1 || status=$?
  grep -E 'leader kills|writes |watch converged|^checked|OK \]|FAILED|Failure' "$log" || true
  if [ "$status" -ne 0 ]; then
    echo "fault-runs: loaded run $run failed; its whole output:"
    cat "$log"
    exit 1
  fi
done
# The network partitions (integration/partition: root only; the tests skip, saying why, otherwise),
# in both topologies, with the client-agent faults and the tolerated clock rates that per-commit
# CI leaves out (DISABLED_); not the clock rates beyond the margin, which overlap by design
# (lock/README.md, "Clock rates").
cmake --build "$build" --target partition_test >/dev/null
for run in $(seq 1 "$runs"); do
  echo "fault-runs: partition run $run of $runs"
  "$build/bin/partition_test" --gtest_brief=1 --gtest_also_run_disabled_tests \
    --gtest_filter='-*BeyondTheMargin*' || exit 1
done
echo "fault-runs: $runs runs passed"

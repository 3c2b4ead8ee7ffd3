#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets of tests/fuzz in build-fuzz/ with clang (REGISTRY_FUZZ=ON) and
# runs each for SECONDS (default 60), one after the other, from a copy of its seed corpus
# (build-fuzz/fuzz/<target>/corpus; the seeds in tests/fuzz/corpus stay as they are). Prints
# runs, exec/s and coverage per target; exits non-zero when a target crashes, leaks, hangs or
# finds a differential disagreement, naming the reproducer. See tests/fuzz/README.md.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     e.g. scripts/fuzz.sh 600 listing_differ_fuzzer
#   scripts/fuzz.sh build                     builds the targets, runs none
#
# FUZZ_BUILD_DIR (default build-fuzz) and FUZZ_BUILD_JOBS (default 2) change the build;
# FUZZ_JOBS (default 1) runs that many targets at once.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
all_targets=(registry_yaml_fuzzer consul_response_fuzzer listing_differ_fuzzer
             devserver_http_fuzzer abi_key_value_fuzzer)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")

# Longest input per target: large enough for a config file, a listing of a few dozen keys or a
# few requests, small enough to keep every execution fast.
declare -A max_len=([registry_yaml_fuzzer]=4096 [consul_response_fuzzer]=8192
                    [listing_differ_fuzzer]=8192 [devserver_http_fuzzer]=4096
                    [abi_key_value_fuzzer]=2048)

pick() { for c in "$@"; do command -v "$c" >/dev/null && { echo "$c"; return; }; done; }
cc=$(pick clang-14 clang)
cxx=$(pick clang++-14 clang++)
if [ -z "$cc" ] || [ -z "$cxx" ]; then
  echo "fuzz: clang not found (Debian: apt-get install clang-14 libclang-rt-14-dev)" >&2
  exit 2
fi
build=${FUZZ_BUILD_DIR:-build-fuzz}
if [ ! -f "$build/build.ninja" ]; then
  CC=$cc CXX=$cxx cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DREGISTRY_FUZZ=ON >/dev/null
fi
nice cmake --build "$build" -j"${FUZZ_BUILD_JOBS:-2}" --target registry_fuzzers

[ "$seconds" != build ] || exit 0

# Runs one target for $seconds in build-fuzz/fuzz/<target>; its exit status goes to its
# directory's `status` file, its CPU time to `cpu-seconds`.
run_target() {
  local target=$1 work=$build/fuzz/$1 status=0
  mkdir -p "$work/corpus" "$work/artifacts"
  cp -n tests/fuzz/corpus/"$target"/* "$work/corpus/" 2>/dev/null || true
  local args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048
              -max_len="${max_len[$target]}" -print_final_stats=1
              -artifact_prefix="$PWD/$work/artifacts/")
  [ -f "tests/fuzz/$target.dict" ] && args+=(-dict="$PWD/tests/fuzz/$target.dict")
  TIMEFORMAT='%3U %3S'
  # Run from the target's directory: relative paths a target touches stay inside build-fuzz.
  { time (cd "$work" && nice -n 19 "$PWD/../../bin/$target" "${args[@]}" corpus \
            >last-run.log 2>&1); } 2>"$work/cpu-seconds" || status=$?
  echo "$status" >"$work/status"
}

# Prints what one run did; returns its exit status.
report_target() {
  local target=$1 work=$build/fuzz/$1
  local log=$work/last-run.log status
  status=$(cat "$work/status")
  local cpu runs speed cov
  cpu=$(awk '{printf "%.1f", ($1 + $2) / 60}' "$work/cpu-seconds" 2>/dev/null || true)
  # A run that stops in its seed corpus prints no statistics: keep going to report it.
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1 || true)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1 || true)
  cov=$( (grep -o 'cov: [0-9]*' "$log" || true) | tail -1 | cut -d' ' -f2)
  echo "fuzz: $target: runs ${runs:-?}, exec/s ${speed:-?}, cov ${cov:-?}, cpu ${cpu:-?} min"
  [ "$status" -ne 0 ] || return 0
  grep -E '^(==[0-9]+==ERROR|SUMMARY|.*DIFFERENTIAL|.*deadly signal)' "$log" | head -5 || true
  local reproducer
  reproducer=$(sed -n 's/.*Test unit written to //p' "$log" | tail -1)
  echo "fuzz: $target FAILED (exit $status); log: $log; reproducer: ${reproducer:-none}"
  echo "fuzz: replay with: $build/bin/$target ${reproducer:-<file>}"
  return 1
}

for target in "${targets[@]}"; do
  [ -n "${max_len[$target]:-}" ] || { echo "fuzz: unknown target $target" >&2; exit 2; }
done
# FUZZ_JOBS targets at a time (default 1): each run is one process on one core.
jobs=${FUZZ_JOBS:-1}
failed=0
for ((first = 0; first < ${#targets[@]}; first += jobs)); do
  batch=("${targets[@]:first:jobs}")
  for target in "${batch[@]}"; do
    echo "fuzz: $target for ${seconds}s"
    run_target "$target" &
  done
  wait
  for target in "${batch[@]}"; do report_target "$target" || failed=1; done
done
[ "$failed" -eq 0 ] && echo "fuzz: all ${#targets[@]} targets passed" || exit 1

// SPDX-License-Identifier: Apache-2.0
// bench/common/bench_check.h
//
// How a benchmark driver stops on a failed call it depends on: it has nothing left to measure,
// so it prints the status after the program's name and exits 1.
#ifndef BENCH_COMMON_BENCH_CHECK_H_
#define BENCH_COMMON_BENCH_CHECK_H_

#include <errno.h>  // program_invocation_short_name (glibc)

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace registry::bench {

[[noreturn]] inline void Die(const absl::Status& status) {
  std::fprintf(stderr, "%s: %s\n", program_invocation_short_name, status.ToString().c_str());
  std::exit(1);
}

inline void Check(const absl::Status& status) {
  if (!status.ok()) Die(status);
}

template <typename T>
T Check(absl::StatusOr<T> value) {
  if (!value.ok()) Die(value.status());
  return *std::move(value);
}

}  // namespace registry::bench

#endif  // BENCH_COMMON_BENCH_CHECK_H_

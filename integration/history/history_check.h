// SPDX-License-Identifier: Apache-2.0
// integration/history/history_check.h
//
// What a fault suite calls to give its run a history and to have the checker (checker/, Go)
// judge it. The history of a test lives in the test binary's working directory (ctest runs it in
// the suite's build folder), under histories/<name>: "beside the test's log", kept after the run
// so that a violation's report and porcupine's visualizations can be read there; the next run
// of the same test starts it afresh.
//
//   absl::StatusOr<std::string> dir = history::FreshHistoryDir("leader-kill");
//   ... each process opens HistoryRecorder::Open(*dir, name) and records its calls ...
//   history::ExpectHistoryChecked(*dir);  // a gtest failure on any violation
//
// Thread safety: plain functions; call them from the test's thread.
#ifndef INTEGRATION_HISTORY_HISTORY_CHECK_H_
#define INTEGRATION_HISTORY_HISTORY_CHECK_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace registry::history {

// A history name for the running gtest test: "<suite>.<test>", each '/' of a parameterized
// test's name made '_'.
std::string CurrentTestHistoryName();

// Creates histories/<name> in the working directory, removing what an earlier run left there,
// and returns its absolute path. `name`: letters, digits, '.', '_' and '-'.
absl::StatusOr<std::string> FreshHistoryDir(absl::string_view name);

// What one run of the checker said.
struct CheckerVerdict {
  int exit_code = -1;  // 0 passed, 1 violation, 2 unreadable, 3 undecided, -1 did not finish
  std::string report;  // what it printed (counts, time taken, each violation)
};

// True when this build has a checker (CMake found Go).
bool CheckerBuilt();

// Runs the checker over `dir` (its report and visualizations go into `dir` too), for at most
// `timeout`. Errors: FailedPrecondition when this build has no checker (Go was not found).
absl::StatusOr<CheckerVerdict> RunChecker(const std::string& dir,
                                          absl::Duration timeout = absl::Minutes(5));

// Runs the checker and prints its report; a gtest failure unless it passed. Without a checker in
// this build the history is left unchecked with a note, except under REGISTRY_CI=1, where that is
// a failure too (CI's machines have Go).
void ExpectHistoryChecked(const std::string& dir);

}  // namespace registry::history

#endif  // INTEGRATION_HISTORY_HISTORY_CHECK_H_

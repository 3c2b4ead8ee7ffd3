// SPDX-License-Identifier: Apache-2.0
#include "integration/history/history_check.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "integration/history/history_recorder.h"
#include "integration/testing/subprocess.h"

namespace registry::history {
namespace {

// Set by CMake to the checker binary it builds, or "" when it found no Go.
constexpr absl::string_view kCheckerBinary = HISTORY_CHECKER_BIN;

}  // namespace

std::string CurrentTestHistoryName() {
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name =
      test == nullptr ? "no-test" : absl::StrCat(test->test_suite_name(), ".", test->name());
  std::replace(name.begin(), name.end(), '/', '_');
  return name;
}

absl::StatusOr<std::string> FreshHistoryDir(absl::string_view name) {
  if (!IsSafeFileName(name)) {
    return absl::InvalidArgumentError(absl::StrCat("history name '", name, "' is not a file name"));
  }
  std::error_code error;
  const std::filesystem::path dir =
      std::filesystem::absolute(std::filesystem::path("histories") / std::string(name), error);
  if (!error) std::filesystem::remove_all(dir, error);
  if (!error) std::filesystem::create_directories(dir, error);
  if (error) {
    return absl::InternalError(
        absl::StrCat("history directory histories/", name, ": ", error.message()));
  }
  return dir.string();
}

bool CheckerBuilt() { return !kCheckerBinary.empty(); }

absl::StatusOr<CheckerVerdict> RunChecker(const std::string& dir, absl::Duration timeout) {
  if (!CheckerBuilt()) {
    return absl::FailedPreconditionError(
        "this build has no history checker: CMake found no Go (integration/history/README.md)");
  }
  const integration::RunResult run =
      integration::RunProcess({std::string(kCheckerBinary), "-history", dir, "-out", dir}, timeout);
  CheckerVerdict verdict;
  verdict.exit_code = run.exit_code;
  verdict.report = run.out + run.err;
  if (run.exit_code == -1) {
    absl::StrAppend(&verdict.report, "\nthe checker did not finish within ",
                    absl::FormatDuration(timeout));
  }
  return verdict;
}

void ExpectHistoryChecked(const std::string& dir) {
  absl::StatusOr<CheckerVerdict> verdict = RunChecker(dir);
  if (!verdict.ok()) {
    const char* ci = std::getenv("REGISTRY_CI");
    if (ci != nullptr && std::string(ci) == "1") {
      ADD_FAILURE() << verdict.status();
    } else {
      std::printf("history %s not checked: %s\n", dir.c_str(),
                  std::string(verdict.status().message()).c_str());
    }
    return;
  }
  std::printf("history %s:\n%s", dir.c_str(), verdict->report.c_str());
  EXPECT_EQ(verdict->exit_code, 0)
      << "the history checker found it wanting (exit " << verdict->exit_code
      << "); its report and visualizations are in " << dir << ":\n"
      << verdict->report;
}

}  // namespace registry::history

// SPDX-License-Identifier: Apache-2.0
// integration/lock/lock_multiprocess_test.cc
//
// Lock safety across real processes: several lock_safety_worker processes, each its own
// repository instance, increment one counter under the same lock with fenced writes. Any overlap
// of two holders would lose an increment or have a fenced write refused.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "integration/lock/lock_fixture.h"

extern char** environ;

namespace registry::lock::testing {
namespace {

constexpr int kWorkers = 8;
constexpr int kRounds = 10;

// Starts the worker; returns its pid, or -1.
pid_t Spawn(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return -1;
  return pid;
}

// Waits for `pid` until `deadline`; kills it after that. Returns its exit status, -1 if killed.
int Reap(pid_t pid, absl::Time deadline) {
  int status = 0;
  if (!Eventually([&] { return waitpid(pid, &status, WNOHANG) != 0; }, deadline - absl::Now())) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(LockTest, ProcessesIncrementingUnderTheLockLoseNoUpdate) {
  std::vector<pid_t> workers;
  for (int i = 0; i < kWorkers; ++i) {
    const pid_t pid =
        Spawn({LOCK_SAFETY_WORKER_PATH, absl::StrCat("--servers=", address()),
               absl::StrCat("--token=", token()), absl::StrCat("--rounds=", kRounds)});
    ASSERT_GT(pid, 0) << "cannot start " << LOCK_SAFETY_WORKER_PATH;
    workers.push_back(pid);
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(40);
  for (pid_t pid : workers) EXPECT_EQ(Reap(pid, deadline), 0) << "worker " << pid;
  absl::StatusOr<consul::KvGetRawResult> count = raw().KvGetRaw("safety/safety/count");
  ASSERT_TRUE(count.ok()) << count.status();
  ASSERT_TRUE(count->value.has_value());
  EXPECT_EQ(*count->value, absl::StrCat(kWorkers * kRounds));
}

}  // namespace
}  // namespace registry::lock::testing

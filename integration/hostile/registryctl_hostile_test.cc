// SPDX-License-Identifier: Apache-2.0
// integration/hostile/registryctl_hostile_test.cc
//
// registryctl, as a real process, against servers that flood, hang or are gone: its memory stays
// bounded by the most one answer may hold (128 MiB by default), and `lock --timeout-ms` exits 1
// by its deadline however the server behaves.
#include <sys/resource.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/hostile/hostile_server.h"
#include "integration/hostile/hostile_testing.h"
#include "integration/testing/subprocess.h"

namespace registry::integration {
namespace {

using Behaviour = HostileServer::Behaviour;
using ::testing::HasSubstr;
using ::testing::Not;

// How late a process may exit after its bound on a loaded machine (sanitizers, ctest -j).
constexpr absl::Duration kSlack = absl::Seconds(3);

RunResult RunCtl(const std::string& address, std::vector<std::string> args) {
  std::vector<std::string> argv = {REGISTRYCTL_BIN, "--servers=" + address};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunProcess(argv, absl::Minutes(2));
}

// TSan's shadow memory multiplies a process's resident set (a 128 MiB answer took registryctl
// to 669 MiB, an endless one to 1.3 GiB): the bound is checked in the other builds only.
#if defined(__SANITIZE_THREAD__)
constexpr long kMaxChildMib = 1L << 20;
#else
constexpr long kMaxChildMib = 512;
#endif

// The largest resident set of the children waited for so far, in MiB.
long LargestChildMib() {
  struct rusage usage {};
  getrusage(RUSAGE_CHILDREN, &usage);
  return usage.ru_maxrss / 1024;  // ru_maxrss is in KiB
}

TEST(RegistryctlHostileTest, AGigabyteListingCostsAtMostTheAnswerLimit) {
  auto server = StartServer(Behaviour::kHugeBody, uint64_t{1} << 30);
  ASSERT_NE(server, nullptr);
  RunResult listed = RunCtl(server->address(), {"ls", "/"});
  EXPECT_EQ(listed.exit_code, 2) << listed.err;
  EXPECT_THAT(listed.err, HasSubstr("larger than 134217728 bytes"));
  // 128 MiB of answer, the growth of the string that holds it, and the process itself (more
  // under a sanitizer); reading the whole answer took over 1 GiB.
  EXPECT_LT(LargestChildMib(), kMaxChildMib);
}

TEST(RegistryctlHostileTest, GetOfABodyWithoutEndFailsAtTheLimit) {
  auto server = StartServer(Behaviour::kEndlessChunks);
  ASSERT_NE(server, nullptr);
  RunResult got = RunCtl(server->address(), {"get", "/k"});
  EXPECT_EQ(got.exit_code, 2) << got.err;
  EXPECT_THAT(got.err, HasSubstr("larger than"));
  EXPECT_LT(LargestChildMib(), kMaxChildMib);
}

class RegistryctlDeadServerTest : public ::testing::TestWithParam<bool> {
 protected:
  // A server that never answers (true), or a closed port (false).
  std::string Address() {
    if (!GetParam()) return ClosedLoopbackAddress();
    server_ = StartServer(Behaviour::kSilent);
    return server_ != nullptr ? server_->address() : "";
  }
  std::unique_ptr<HostileServer> server_;
};

TEST_P(RegistryctlDeadServerTest, LockWithATimeoutExitsOneByItsDeadline) {
  RunResult run = RunCtl(Address(), {"lock", "L", "--timeout-ms=1500", "--", "echo", "never"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_THAT(run.err, HasSubstr("not acquired within 1.5s"));
  EXPECT_THAT(run.out, Not(HasSubstr("never")));
  EXPECT_LT(run.elapsed, absl::Milliseconds(1500) + kSlack) << run.err;
}

TEST_P(RegistryctlDeadServerTest, SemaphoreWithATimeoutExitsOneByItsDeadline) {
  RunResult run = RunCtl(
      Address(), {"semaphore", "S", "--limit=2", "--timeout-ms=1500", "--", "echo", "never"});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_LT(run.elapsed, absl::Milliseconds(1500) + kSlack) << run.err;
}

INSTANTIATE_TEST_SUITE_P(SilentOrGone, RegistryctlDeadServerTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Silent" : "ClosedPort";
                         });

}  // namespace
}  // namespace registry::integration

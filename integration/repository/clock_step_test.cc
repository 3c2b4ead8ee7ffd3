// SPDX-License-Identifier: Apache-2.0
// integration/repository/clock_step_test.cc
//
// The instance session keeps being renewed when the wall clock steps back. This binary steps its
// own wall clock: it defines clock_gettime, which the libraries it loads (Abseil's absl::Now())
// call instead of libc's, and shifts CLOCK_REALTIME by an offset the test sets; the steady clock
// is left alone. The dev server runs as a separate process, on the true clock, and expires a
// session that is not renewed for 2 x TTL.
#include <dlfcn.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "instance/instance.h"
#include "integration/testing/dev_control.h"
#include "integration/testing/eventually.h"
#include "integration/testing/server_process_test.h"
#include "integration/testing/server_test.h"
#include "nlohmann/json.hpp"
#include "repository/instance_session.h"

namespace {

// Added to every CLOCK_REALTIME reading of this process.
std::atomic<int64_t> realtime_offset_ns{0};

}  // namespace

// Default visibility: the project builds with hidden symbols, and this one must be seen.
extern "C" __attribute__((visibility("default"))) int clock_gettime(clockid_t clock,
                                                                    struct timespec* ts) {
  using ClockGettime = int (*)(clockid_t, struct timespec*);
  static const ClockGettime real =
      reinterpret_cast<ClockGettime>(dlsym(RTLD_NEXT, "clock_gettime"));
  const int result = real(clock, ts);
  const int64_t offset = realtime_offset_ns.load();
  if (result != 0 || clock != CLOCK_REALTIME || offset == 0) return result;
  const int64_t ns = int64_t{ts->tv_sec} * 1'000'000'000 + ts->tv_nsec + offset;
  ts->tv_sec = ns / 1'000'000'000;
  ts->tv_nsec = ns % 1'000'000'000;
  return result;
}

namespace registry::integration {
namespace {

// Renewals the dev server has answered so far (its request counters).
uint64_t Renewals(const std::string& address) {
  absl::StatusOr<HttpReply> reply =
      HttpCall("GET", absl::StrCat("http://", address, "/v1/_dev/stats"));
  if (!reply.ok() || reply->status != 200) return 0;
  const nlohmann::json stats = nlohmann::json::parse(reply->body, nullptr, false);
  if (!stats.is_object() || !stats.contains("session.renew")) return 0;
  return stats["session.renew"].get<uint64_t>();
}

class ClockStepTest : public ServerProcessTest {
 protected:
  void TearDown() override { realtime_offset_ns.store(0); }
};

TEST_F(ClockStepTest, RenewalKeepsItsPaceWhenTheWallClockStepsBackAnHour) {
  ConsulRepositoryOptions options;
  options.client.servers = server_address();
  options.namespace_name = "clock_step";
  options.session_ttl = absl::Seconds(1);
  absl::StatusOr<std::unique_ptr<ConsulRepository>> repository = NewConsulRepository(options);
  ASSERT_TRUE(repository.ok()) << repository.status();
  ASSERT_TRUE((*repository)->PersistEphemeral("/online/me", "1").ok());
  const std::string session = (*repository)->CurrentSessionId();

  const absl::Time before = absl::Now();
  realtime_offset_ns.store(-absl::ToInt64Nanoseconds(absl::Hours(1)));
  // The interposed clock is the one absl::Now() reads, or this test proves nothing. Abseil
  // reads the kernel's clock about every 2 s only (kMinNSBetweenSamples in absl/time/clock.cc)
  // and extrapolates from the CPU's cycle counter in between: the step shows within that.
  ASSERT_TRUE(registry::testing::Eventually(
      [&] { return absl::Now() < before - absl::Minutes(59); }, absl::Seconds(10)))
      << "absl::Now() did not step back: " << absl::Now();

  // Renewal runs every TTL/2: a dozen renewals take about 6 s on a steady schedule, and never
  // come (for an hour) on one kept by the wall clock, which then lets the session expire.
  const uint64_t start = Renewals(server_address());
  EXPECT_TRUE(registry::testing::Eventually([&] {
    return Renewals(server_address()) >= start + 12;
  })) << "renewals since the step: "
      << Renewals(server_address()) - start;
  absl::StatusOr<std::string> holder = KeySession("clock_step/online/me");
  ASSERT_TRUE(holder.ok()) << holder.status();
  EXPECT_EQ(*holder, session) << "the instance session was lost";
}

}  // namespace
}  // namespace registry::integration

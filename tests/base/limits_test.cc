// SPDX-License-Identifier: Apache-2.0
// tests/base/limits_test.cc
#include "base/limits.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace registry::limits {
namespace {

using ::testing::HasSubstr;

const TimingNames kNames = {"ttl", "wait", "connect", "request", "delay", "retry"};

std::string ErrorOf(const Timings& timings) {
  absl::Status status = ValidateTimings(timings, kNames);
  EXPECT_TRUE(status.ok() || absl::IsInvalidArgument(status)) << status;
  return std::string(status.message());
}

TEST(ValidateTimingsTest, TheDefaultsAreValid) { EXPECT_EQ(ErrorOf(Timings{}), ""); }

TEST(ValidateTimingsTest, EveryLimitIsInclusive) {
  Timings timings;
  timings.session_ttl = kMaxSessionTtl;
  timings.block_query_wait = kMaxBlockQueryWait;
  timings.connect_timeout = kMaxTimeout;
  timings.request_timeout = kMaxTimeout;
  timings.session_lock_delay = kMaxLockDelay;
  timings.lock_retry = kMaxLockRetry;
  EXPECT_EQ(ErrorOf(timings), "");
  timings.session_lock_delay = absl::ZeroDuration();
  EXPECT_EQ(ErrorOf(timings), "");
}

TEST(ValidateTimingsTest, AValueOutOfItsRangeIsNamedWithTheRange) {
  Timings timings;
  timings.block_query_wait = kMaxBlockQueryWait + absl::Milliseconds(1);
  EXPECT_EQ(ErrorOf(timings), "wait: 10m0.001s must be positive and at most 10m");
  timings = Timings{};
  timings.request_timeout = absl::ZeroDuration();
  EXPECT_THAT(ErrorOf(timings), HasSubstr("request: 0 must be positive"));
  timings = Timings{};
  timings.session_lock_delay = absl::Milliseconds(-1);
  EXPECT_EQ(ErrorOf(timings), "delay: -1ms must be at least 0 and at most 1m");
}

TEST(ValidateTimingsTest, ALockRetryLongerThanTheTtlNamesTheTtl) {
  Timings timings;
  timings.session_ttl = absl::Seconds(2);
  timings.lock_retry = absl::Seconds(3);
  EXPECT_EQ(ErrorOf(timings), "retry: 3s must be positive and at most 2s (ttl)");
  timings.lock_retry = absl::Seconds(2);
  EXPECT_EQ(ErrorOf(timings), "");
}

TEST(ValidateTimingsTest, ALockRetryOverItsOwnLimitIsRejectedWhateverTheTtl) {
  Timings timings;
  timings.session_ttl = absl::Minutes(5);
  timings.lock_retry = kMaxLockRetry + absl::Milliseconds(1);
  EXPECT_EQ(ErrorOf(timings), "retry: 1m0.001s must be positive and at most 1m");
}

}  // namespace
}  // namespace registry::limits

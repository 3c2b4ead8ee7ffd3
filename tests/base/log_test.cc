// SPDX-License-Identifier: Apache-2.0
#include "base/log.h"

#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace registry {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

// Collects what a host sink receives. Every test removes its sink before it ends (the log is
// process-wide), which also waits for the last delivery.
class Collected {
 public:
  LogSink Sink() {
    return [this](const LogRecord& record) {
      absl::MutexLock lock(&mu_);
      records_.push_back(record);
      threads_.push_back(std::this_thread::get_id());
    };
  }
  std::vector<std::string> Messages() {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> out;
    for (const LogRecord& record : records_) out.push_back(record.message);
    return out;
  }
  std::vector<LogRecord> Records() {
    absl::MutexLock lock(&mu_);
    return records_;
  }
  std::vector<std::thread::id> Threads() {
    absl::MutexLock lock(&mu_);
    return threads_;
  }

 private:
  absl::Mutex mu_;
  std::vector<LogRecord> records_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread::id> threads_ ABSL_GUARDED_BY(mu_);
};

class LogTest : public ::testing::Test {
 protected:
  void TearDown() override {
    SetLogSink(nullptr, LogLevel::kWarn);
    SetStderrLogLevel(LogLevel::kWarn);
  }
};

TEST_F(LogTest, LevelsParseByNameInAnyCase) {
  EXPECT_EQ(ParseLogLevel("ERROR"), LogLevel::kError);
  EXPECT_EQ(ParseLogLevel("warn"), LogLevel::kWarn);
  EXPECT_EQ(ParseLogLevel("Warning"), LogLevel::kWarn);
  EXPECT_EQ(ParseLogLevel("info"), LogLevel::kInfo);
  EXPECT_EQ(ParseLogLevel("debug"), LogLevel::kDebug);
  EXPECT_EQ(ParseLogLevel("verbose"), std::nullopt);
  EXPECT_EQ(LogLevelName(LogLevel::kInfo), "info");
}

TEST_F(LogTest, AHostSinkGetsRecordsAtItsLevelInOrderOffTheLoggingThread) {
  Collected collected;
  SetLogSink(collected.Sink(), LogLevel::kInfo);
  const absl::Time before = absl::Now();
  Log(LogLevel::kWarn, "session", "renewal failed: ", 503);
  Log(LogLevel::kDebug, "session", "not delivered");
  Log(LogLevel::kInfo, "watch", "recovered");
  EXPECT_FALSE(LogEnabled(LogLevel::kDebug));
  SetLogSink(nullptr, LogLevel::kWarn);  // returns after the last call

  EXPECT_THAT(collected.Messages(), ElementsAre("renewal failed: 503", "recovered"));
  const std::vector<LogRecord> records = collected.Records();
  EXPECT_EQ(records[0].level, LogLevel::kWarn);
  EXPECT_EQ(records[0].component, "session");
  EXPECT_EQ(records[1].component, "watch");
  EXPECT_GE(records[0].time, before - absl::Milliseconds(1));
  EXPECT_LE(records[1].time, absl::Now());
  for (std::thread::id id : collected.Threads()) EXPECT_NE(id, std::this_thread::get_id());
}

TEST_F(LogTest, RemovingTheSinkReturnsAfterItsLastCallAndItIsNeverCalledAgain) {
  Collected collected;
  SetLogSink(collected.Sink(), LogLevel::kDebug);
  for (int i = 0; i < 100; ++i) Log(LogLevel::kInfo, "t", i);
  SetLogSink(nullptr, LogLevel::kWarn);
  EXPECT_EQ(collected.Messages().size(), 100u);
  testing::internal::CaptureStderr();
  Log(LogLevel::kWarn, "t", "after removal");
  EXPECT_THAT(testing::internal::GetCapturedStderr(), HasSubstr("W t: after removal"));
  EXPECT_EQ(collected.Messages().size(), 100u);
}

TEST_F(LogTest, RegisteredSecretsAreRedactedUntilUnregistered) {
  Collected collected;
  SetLogSink(collected.Sink(), LogLevel::kWarn);
  RegisterLogSecret("s3cr3t-token");
  RegisterLogSecret("s3cr3t-token");  // two clients with one token
  Log(LogLevel::kWarn, "s3cr3t-token", "request with token s3cr3t-token failed");
  UnregisterLogSecret("s3cr3t-token");
  Log(LogLevel::kWarn, "c", "still s3cr3t-token");
  UnregisterLogSecret("s3cr3t-token");
  Log(LogLevel::kWarn, "c", "now s3cr3t-token");
  SetLogSink(nullptr, LogLevel::kWarn);

  const std::vector<LogRecord> records = collected.Records();
  ASSERT_EQ(records.size(), 3u);
  EXPECT_EQ(records[0].component, "<redacted>");
  EXPECT_EQ(records[0].message, "request with token <redacted> failed");
  EXPECT_EQ(records[1].message, "still <redacted>");
  EXPECT_EQ(records[2].message, "now s3cr3t-token");
}

TEST_F(LogTest, TheDefaultIsStderrAtWarnAndItsLevelCanChange) {
  testing::internal::CaptureStderr();
  Log(LogLevel::kInfo, "session", "quiet");
  Log(LogLevel::kError, "lock", "loud");
  SetStderrLogLevel(LogLevel::kDebug);
  Log(LogLevel::kDebug, "watch", "now heard");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, Not(HasSubstr("quiet")));
  EXPECT_THAT(err, HasSubstr(" E lock: loud\n"));
  EXPECT_THAT(err, HasSubstr(" D watch: now heard\n"));
}

TEST_F(LogTest, ASinkMayReplaceItselfFromInsideItsOwnCall) {
  Collected second;
  absl::Notification replaced;
  SetLogSink(
      [&](const LogRecord&) {
        SetLogSink(second.Sink(), LogLevel::kWarn);
        replaced.Notify();
      },
      LogLevel::kWarn);
  Log(LogLevel::kWarn, "t", "to the first");
  replaced.WaitForNotification();
  Log(LogLevel::kWarn, "t", "to the second");
  SetLogSink(nullptr, LogLevel::kWarn);
  EXPECT_THAT(second.Messages(), ElementsAre("to the second"));
}

TEST_F(LogTest, ASinkThatFallsBehindLosesNewerRecordsAndIsToldHowMany) {
  absl::Notification release;
  Collected collected;
  LogSink collect = collected.Sink();
  SetLogSink(
      [&](const LogRecord& record) {
        release.WaitForNotification();
        collect(record);
      },
      LogLevel::kWarn);
  // The first record may be taken off the queue by the blocked sink, or not: fill past both.
  const int total = static_cast<int>(kLogQueueCapacity) + 10;
  for (int i = 0; i < total; ++i) Log(LogLevel::kWarn, "t", i);
  release.Notify();
  SetLogSink(collect, LogLevel::kWarn);  // returns once the queue has drained
  Log(LogLevel::kWarn, "t", "after");    // the notice goes just before it
  SetLogSink(nullptr, LogLevel::kWarn);

  const std::vector<std::string> messages = collected.Messages();
  ASSERT_GE(messages.size(), kLogQueueCapacity);
  EXPECT_EQ(messages.back(), "after");
  const std::string& notice = messages[messages.size() - 2];
  EXPECT_THAT(notice, HasSubstr("log record(s) dropped"));
  const int dropped = std::stoi(notice);
  EXPECT_EQ(static_cast<int>(messages.size()) - 2 + dropped, total);
}

TEST_F(LogTest, TheDropNoticeNeverTakesTheQueuePastItsCapacity) {
  absl::Mutex mu;
  int entered = 0;  // sink calls begun
  int allowed = 0;  // sink calls that may return
  Collected collected;
  LogSink collect = collected.Sink();
  SetLogSink(
      [&](const LogRecord& record) {
        absl::MutexLock lock(&mu);
        const int mine = entered++;
        auto may_return = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return mine < allowed; };
        mu.Await(absl::Condition(&may_return));
        collect(record);
      },
      LogLevel::kWarn);
  auto await_entered = [&](int count) {
    absl::MutexLock lock(&mu);
    auto reached = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return entered >= count; };
    mu.Await(absl::Condition(&reached));
  };
  Log(LogLevel::kWarn, "t", "held");  // taken off the queue, held in the sink
  await_entered(1);
  for (size_t i = 0; i < kLogQueueCapacity + 5; ++i) Log(LogLevel::kWarn, "t", i);  // 5 dropped
  {
    absl::MutexLock lock(&mu);
    allowed = 1;  // one place frees: too few for the notice and a record
  }
  await_entered(2);
  Log(LogLevel::kWarn, "t", "one too many");
  {
    absl::MutexLock lock(&mu);
    allowed = 1 << 30;
  }
  SetLogSink(collect, LogLevel::kWarn);  // returns once the queue has drained
  Log(LogLevel::kWarn, "t", "after");
  SetLogSink(nullptr, LogLevel::kWarn);

  const std::vector<std::string> messages = collected.Messages();
  ASSERT_EQ(messages.size(), 1 + kLogQueueCapacity + 2) << "held, a full queue, notice, after";
  EXPECT_EQ(messages[kLogQueueCapacity + 1],
            absl::StrCat(6, " log record(s) dropped: the log sink fell ", kLogQueueCapacity,
                         " records behind"));
  EXPECT_EQ(messages.back(), "after");
}

TEST_F(LogTest, AStderrLineHasAnIsoTimeTheLevelTheComponentAndTheMessage) {
  const LogRecord record{LogLevel::kWarn, absl::FromUnixMillis(1764070701123), "session",
                         "renewal failed"};
  EXPECT_EQ(FormatLogLine(record), "2025-11-25T11:38:21.123Z W session: renewal failed");
}

}  // namespace
}  // namespace registry

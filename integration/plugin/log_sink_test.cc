// SPDX-License-Identifier: Apache-2.0
// integration/plugin/log_sink_test.cc
//
// The plugin's log through the C ABI (1.6 set_log_sink), with the real plugin loaded by the
// host-side wrapper against a server process: records arrive at the host's level, on a plugin
// thread that is not the caller's, and stop once the sink is removed.
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "host/loader.h"
#include "host/plugin_client.h"
#include "integration/testing/eventually.h"
#include "integration/testing/server_process_test.h"

namespace registry::integration {
namespace {

using ::registry::testing::kPatience;
using ::testing::HasSubstr;

class HostLog {
 public:
  LogSink Sink() {
    return [this](const LogRecord& record) {
      absl::MutexLock lock(&mu_);
      records_.push_back(record);
      threads_.push_back(std::this_thread::get_id());
    };
  }
  // Waits up to 15 s for a record of `component` whose message has `text`.
  bool WaitFor(absl::string_view component, absl::string_view text) {
    absl::MutexLock lock(&mu_);
    auto seen = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      for (const LogRecord& record : records_) {
        if (record.component == component && absl::StrContains(record.message, text)) return true;
      }
      return false;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&seen), kPatience);
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

class LogSinkTest : public ServerProcessTest {
 protected:
  void SetUp() override {
    ServerProcessTest::SetUp();
    if (HasFatalFailure()) return;
    absl::StatusOr<std::shared_ptr<plugin::PluginLibrary>> library =
        plugin::LoadPluginFile(CONSUL_PLUGIN);
    ASSERT_TRUE(library.ok()) << library.status();
    library_ = *library;
  }
  void TearDown() override {
    if (library_ != nullptr) {
      EXPECT_TRUE(library_->SetLogSink(nullptr, LogLevel::kWarn).ok());
    }
    ServerProcessTest::TearDown();
  }

  absl::StatusOr<std::unique_ptr<plugin::PluginRepository>> NewRepository() {
    plugin::PropList props = {
        {"namespace",
         absl::StrCat("log_sink_",
                      ::testing::UnitTest::GetInstance()->current_test_info()->name())},
        {"server-lists", server_address()},
        {"timeToLiveSeconds", "1"}};
    if (!token().empty()) props.emplace_back("token", token());
    return library_->CreateFromProps(props);
  }

  std::shared_ptr<plugin::PluginLibrary> library_;
};

TEST_F(LogSinkTest, TheHostSinkHearsTheInstanceSessionFromAPluginThreadAtItsLevel) {
  HostLog log;
  ASSERT_TRUE(library_->SetLogSink(log.Sink(), LogLevel::kInfo).ok());
  absl::StatusOr<std::unique_ptr<plugin::PluginRepository>> repository = NewRepository();
  ASSERT_TRUE(repository.ok()) << repository.status();
  ASSERT_TRUE((*repository)->PersistEphemeral("/online/a", "1").ok());

  EXPECT_TRUE(log.WaitFor("session", "created")) << "no 'session' record saying it was created";
  const absl::Time after = absl::Now();
  for (const LogRecord& record : log.Records()) {
    EXPECT_LE(record.level, LogLevel::kInfo) << record.message;
    EXPECT_LE(record.time, after);
  }
  for (std::thread::id id : log.Threads()) EXPECT_NE(id, std::this_thread::get_id());
}

TEST_F(LogSinkTest, ARemovedSinkIsNeverCalledAgain) {
  HostLog log;
  ASSERT_TRUE(library_->SetLogSink(log.Sink(), LogLevel::kInfo).ok());
  ASSERT_TRUE(library_->SetLogSink(nullptr, LogLevel::kWarn).ok());
  absl::StatusOr<std::unique_ptr<plugin::PluginRepository>> repository = NewRepository();
  ASSERT_TRUE(repository.ok()) << repository.status();
  ASSERT_TRUE((*repository)->PersistEphemeral("/online/a", "1").ok());
  ASSERT_TRUE((*repository)->Close().ok());
  EXPECT_TRUE(log.Records().empty());
}

TEST_F(LogSinkTest, ALevelOutsideTheFourIsRefusedNamingIt) {
  const RegistryPluginApi& api = library_->api();
  RegistryError error{};
  EXPECT_EQ(api.set_log_sink(nullptr, nullptr, 7, &error), REGISTRY_INVALID_ARGUMENT);
  ASSERT_NE(error.message, nullptr);
  EXPECT_THAT(error.message, HasSubstr("min_level 7"));
  api.release_error(&error);
}

}  // namespace
}  // namespace registry::integration

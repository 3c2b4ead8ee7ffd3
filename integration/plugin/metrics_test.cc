// SPDX-License-Identifier: Apache-2.0
// integration/plugin/metrics_test.cc
//
// The plugin's metrics through the C ABI (1.7), with the real plugin loaded by the host-side
// wrapper against a server process. The text is read by a real Prometheus parser (Debian's
// python3-prometheus-client, through parse_exposition.py), and the counters must move as
// repository calls, watches and locks happen.
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "host/loader.h"
#include "host/plugin_client.h"
#include "integration/testing/server_process_test.h"
#include "integration/testing/subprocess.h"
#include "nlohmann/json.hpp"

namespace registry::integration {
namespace {

// A scrape as the parser read it: sample values by "name{label=value,...}" (labels sorted).
struct Scrape {
  nlohmann::json families;
  nlohmann::json samples;

  double Value(const std::string& sample) const {
    auto it = samples.find(sample);
    EXPECT_NE(it, samples.end()) << "no sample " << sample;
    return it == samples.end() ? -1 : it->get<double>();
  }
};

class MetricsTest : public ServerProcessTest {
 protected:
  void SetUp() override {
    ServerProcessTest::SetUp();
    if (HasFatalFailure()) return;
    absl::StatusOr<std::shared_ptr<plugin::PluginLibrary>> library =
        plugin::LoadPluginFile(CONSUL_PLUGIN);
    ASSERT_TRUE(library.ok()) << library.status();
    library_ = *library;
  }

  absl::StatusOr<std::unique_ptr<plugin::PluginRepository>> NewRepository() {
    plugin::PropList props = {{"namespace", absl::StrCat("metrics_", TestName())},
                              {"server-lists", server_address()},
                              {"timeToLiveSeconds", "10"}};
    if (!token().empty()) props.emplace_back("token", token());
    return library_->CreateFromProps(props);
  }

  static std::string TestName() {
    return ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }

  // metrics_text, parsed by prometheus_client.
  Scrape TakeScrape() {
    absl::StatusOr<std::string> text = library_->MetricsText();
    EXPECT_TRUE(text.ok()) << text.status();
    const std::string path = absl::StrCat(ProcessTempDir(), "/scrape", ++scrapes_, ".txt");
    std::ofstream(path) << text.value_or("");
    RunResult parsed = RunProcess({"/usr/bin/python3", PARSE_EXPOSITION, path});
    EXPECT_EQ(parsed.exit_code, 0) << parsed.err << "\n" << text.value_or("");
    Scrape scrape;
    if (parsed.exit_code != 0) return scrape;
    nlohmann::json json = nlohmann::json::parse(parsed.out);
    scrape.families = json["families"];
    scrape.samples = json["samples"];
    return scrape;
  }

  std::shared_ptr<plugin::PluginLibrary> library_;
  int scrapes_ = 0;
};

constexpr char kKvOk[] = "registry_consul_requests_total{endpoint=kv,outcome=ok}";
constexpr char kTxnOk[] = "registry_consul_requests_total{endpoint=txn,outcome=ok}";
constexpr char kKvCount[] = "registry_consul_request_duration_seconds_count{endpoint=kv}";
constexpr char kTxnCount[] = "registry_consul_request_duration_seconds_count{endpoint=txn}";
constexpr char kKvSum[] = "registry_consul_request_duration_seconds_sum{endpoint=kv}";
constexpr char kBlockingOk[] = "registry_consul_requests_total{endpoint=blocking_query,outcome=ok}";
constexpr char kEvents[] = "registry_consul_watch_events_total{}";
constexpr char kLag[] = "registry_consul_watch_delivery_lag_seconds_count{}";
constexpr char kCallbacks[] = "registry_consul_watch_callback_duration_seconds_count{}";
constexpr char kPrefixWatches[] = "registry_consul_watches_active{kind=prefix}";
constexpr char kSessions[] = "registry_consul_session_creations_total{}";
constexpr char kAcquired[] = "registry_consul_lock_acquisitions_total{kind=mutex}";
constexpr char kTimeouts[] = "registry_consul_lock_timeouts_total{kind=mutex}";
constexpr char kHeld[] = "registry_consul_locks_held{kind=mutex}";
constexpr char kWaitCount[] = "registry_consul_lock_wait_duration_seconds_count{kind=mutex}";

double OpenRepositories(const Scrape& scrape) {
  double open = 0;
  for (const char* state : {"connecting", "connected", "suspended", "lost", "reconnected"}) {
    open += scrape.Value(absl::StrCat("registry_consul_connection_state{state=", state, "}"));
  }
  return open;
}

TEST_F(MetricsTest, TheTextParsesAndItsCountersMoveAsCallsWatchesAndLocksHappen) {
  const Scrape before = TakeScrape();
  EXPECT_EQ(before.families.value("registry_consul_requests", ""), "counter");
  EXPECT_EQ(before.families.value("registry_consul_request_duration_seconds", ""), "histogram");
  EXPECT_EQ(before.families.value("registry_consul_connection_state", ""), "gauge");

  auto repository = NewRepository();
  ASSERT_TRUE(repository.ok()) << repository.status();
  auto other = NewRepository();
  ASSERT_TRUE(other.ok()) << other.status();
  plugin::PluginRepository& repo = **repository;
  for (const char* key : {"/m/a", "/m/b", "/m/c"}) ASSERT_TRUE(repo.Persist(key, "v").ok());
  ASSERT_TRUE(repo.Get("/m/a").ok());
  ASSERT_TRUE(repo.Get("/m/absent").ok());  // a 404: the store's "absent", an ok outcome

  absl::Notification event;
  auto watch = repo.AddWatch("/w", [&](const DataChangedEvent&) {
    if (!event.HasBeenNotified()) event.Notify();
  });
  ASSERT_TRUE(watch.ok()) << watch.status();
  ASSERT_TRUE(repo.Persist("/w/x", "1").ok());
  ASSERT_TRUE(event.WaitForNotificationWithTimeout(absl::Seconds(15)));

  auto lock = repo.GetLock("metrics");
  ASSERT_TRUE(lock.ok()) << lock.status();
  ASSERT_TRUE((*lock)->Lock().ok());
  const Scrape holding = TakeScrape();
  ASSERT_TRUE((*lock)->Unlock().ok());
  auto busy = (*other)->GetLock("busy");
  ASSERT_TRUE(busy.ok()) << busy.status();
  ASSERT_TRUE((*busy)->Lock().ok());
  auto contended = repo.GetLock("busy");
  ASSERT_TRUE(contended.ok()) << contended.status();
  absl::StatusOr<bool> acquired = (*contended)->TryLock(absl::ZeroDuration());
  ASSERT_TRUE(acquired.ok()) << acquired.status();
  EXPECT_FALSE(*acquired);
  const Scrape after = TakeScrape();

  EXPECT_GE(after.Value(kKvOk) - before.Value(kKvOk), 2);    // the gets
  EXPECT_GE(after.Value(kTxnOk) - before.Value(kTxnOk), 4);  // the persists
  EXPECT_GE(after.Value(kKvCount) - before.Value(kKvCount), 2);
  EXPECT_GE(after.Value(kTxnCount) - before.Value(kTxnCount), 4);
  EXPECT_GT(after.Value(kKvSum), before.Value(kKvSum));
  EXPECT_GE(after.Value(kBlockingOk) - before.Value(kBlockingOk), 1);
  EXPECT_GE(after.Value(kEvents) - before.Value(kEvents), 1);
  EXPECT_GE(after.Value(kLag) - before.Value(kLag), 1);
  EXPECT_GE(after.Value(kCallbacks) - before.Value(kCallbacks), 1);
  EXPECT_EQ(after.Value(kPrefixWatches) - before.Value(kPrefixWatches), 1);
  EXPECT_GE(after.Value(kSessions) - before.Value(kSessions), 2);
  EXPECT_EQ(holding.Value(kHeld) - before.Value(kHeld), 1);
  EXPECT_EQ(after.Value(kHeld) - before.Value(kHeld), 1);  // the other repository's "busy"
  EXPECT_EQ(after.Value(kAcquired) - before.Value(kAcquired), 2);
  EXPECT_EQ(after.Value(kTimeouts) - before.Value(kTimeouts), 1);
  EXPECT_EQ(after.Value(kWaitCount) - before.Value(kWaitCount), 3);
  EXPECT_EQ(OpenRepositories(after) - OpenRepositories(before), 2);

  ASSERT_TRUE((*busy)->Unlock().ok());
  watch->Remove();
  ASSERT_TRUE(repo.Close().ok());
  ASSERT_TRUE((*other)->Close().ok());
  const Scrape closed = TakeScrape();
  EXPECT_EQ(closed.Value(kPrefixWatches), before.Value(kPrefixWatches));
  EXPECT_EQ(closed.Value(kHeld), before.Value(kHeld));
  EXPECT_EQ(OpenRepositories(closed), OpenRepositories(before));
}

TEST_F(MetricsTest, TheStructuredSamplesAreTheTextsSamples) {
  auto repository = NewRepository();
  ASSERT_TRUE(repository.ok()) << repository.status();
  ASSERT_TRUE((*repository)->Persist("/s", "1").ok());
  absl::StatusOr<std::vector<plugin::MetricSample>> samples = library_->Metrics();
  ASSERT_TRUE(samples.ok()) << samples.status();
  absl::StatusOr<std::string> text = library_->MetricsText();
  ASSERT_TRUE(text.ok()) << text.status();
  size_t sample_lines = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipEmpty())) {
    if (!absl::StartsWith(line, "#")) ++sample_lines;
  }
  EXPECT_EQ(samples->size(), sample_lines);
  bool saw_bucket = false;
  for (const plugin::MetricSample& sample : *samples) {
    EXPECT_TRUE(absl::StartsWith(sample.name, sample.family)) << sample.name;
    EXPECT_THAT(*text, ::testing::HasSubstr(absl::StrCat("# TYPE ", sample.family, " ")));
    if (absl::EndsWith(sample.name, "_bucket")) {
      saw_bucket = true;
      EXPECT_EQ(sample.type, REGISTRY_METRIC_HISTOGRAM);
      ASSERT_FALSE(sample.labels.empty());
      EXPECT_EQ(sample.labels.back().first, "le");
    }
    if (sample.name == "registry_consul_request_duration_seconds_count" &&
        sample.labels == std::vector<std::pair<std::string, std::string>>{{"endpoint", "txn"}}) {
      EXPECT_GE(sample.value, 1);  // the persist
    }
  }
  EXPECT_TRUE(saw_bucket);
}

TEST_F(MetricsTest, ANullVisitorIsRefusedNamingIt) {
  const RegistryPluginApi& api = library_->api();
  RegistryError error{};
  EXPECT_EQ(api.visit_metrics(nullptr, nullptr, &error), REGISTRY_INVALID_ARGUMENT);
  ASSERT_NE(error.message, nullptr);
  EXPECT_THAT(error.message, ::testing::HasSubstr("'visit'"));
  api.release_error(&error);
}

}  // namespace
}  // namespace registry::integration

// SPDX-License-Identifier: Apache-2.0
// tests/instance/metric_families_test.cc
//
// The families every layer of an instance declares, as one catalog: the names operators alert
// on, and the label values the layers' enums index.
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "base/metric_catalog.h"
#include "consul/exchange_metrics.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "instance/instance.h"
#include "lock/lock_metrics.h"
#include "repository/session_metrics.h"

namespace registry {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

TEST(MetricFamiliesTest, EveryNameIsPrefixedUniqueAndCountersEndInTotal) {
  MakeInstanceMetrics();
  std::set<std::string> names;
  for (const metrics::FamilyBase* family : metrics::RegisteredFamilies()) {
    EXPECT_TRUE(absl::StartsWith(family->name(), "registry_consul_")) << family->name();
    EXPECT_TRUE(names.insert(family->name()).second) << family->name();
    EXPECT_EQ(family->type() == metrics::MetricType::kCounter,
              absl::EndsWith(family->name(), "_total"))
        << family->name();
    if (family->type() == metrics::MetricType::kHistogram) {
      EXPECT_TRUE(absl::EndsWith(family->name(), "_seconds")) << family->name();
    }
    EXPECT_FALSE(family->help().empty()) << family->name();
  }
  EXPECT_EQ(names.size(), 20u);
}

TEST(MetricFamiliesTest, TheLabelsFollowTheEnumsThatIndexThem) {
  using consul::RequestEndpoint;
  using consul::RequestOutcome;
  using metrics::Index;
  bool seen = false;
  metrics::CounterFamily& requests = consul::RequestMetrics().requests;
  const uint64_t before =
      requests.At({Index(RequestEndpoint::kSession), Index(RequestOutcome::kUnknownOutcome)})
          .Value();
  requests.At({Index(RequestEndpoint::kSession), Index(RequestOutcome::kUnknownOutcome)})
      .Increment();
  requests.Visit([&](const metrics::Sample& sample) {
    if (sample.value == static_cast<double>(before + 1) && !seen &&
        sample.labels[0].second == "session" && sample.labels[1].second == "unknown_outcome") {
      seen = true;
    }
  });
  EXPECT_TRUE(seen);
  std::vector<std::pair<std::string, std::string>> states;
  SessionMetrics().connection_state.Visit([&](const metrics::Sample& sample) {
    states.emplace_back(std::string(sample.labels[0].first), std::string(sample.labels[0].second));
  });
  EXPECT_THAT(states, ElementsAre(Pair("state", "connecting"), Pair("state", "connected"),
                                  Pair("state", "suspended"), Pair("state", "lost"),
                                  Pair("state", "reconnected")));
  EXPECT_THAT(metrics::MetricsExposition(),
              HasSubstr("# TYPE registry_consul_request_duration_seconds histogram\n"));
}

TEST(MetricFamiliesTest, EveryLockFamilyListsEveryKindBeforeAnyLockIsMade) {
  MakeInstanceMetrics();
  const std::string text = metrics::MetricsExposition();
  for (const std::string& kind : lock::LockKindLabels()) {
    EXPECT_THAT(text, HasSubstr("registry_consul_locks_held{kind=\"" + kind + "\"} "));
    EXPECT_THAT(text, HasSubstr("registry_consul_lock_fenced_writes_refused_total{kind=\"" + kind +
                                "\"} "));
  }
}

}  // namespace
}  // namespace registry

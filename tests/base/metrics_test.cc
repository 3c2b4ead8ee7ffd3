// SPDX-License-Identifier: Apache-2.0
// tests/base/metrics_test.cc
//
// The metric types and the text format they are written in; the catalog's names.
#include "base/metrics.h"

#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/plugin_metrics.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace registry::metrics {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

TEST(MetricsTest, AFamilyWithTwoLabelsListsEveryCombinationLastLabelFastest) {
  CounterFamily requests("requests_total", "Requests.",
                         {{"endpoint", {"kv", "txn"}}, {"outcome", {"ok", "error"}}});
  requests.At({1, 0}).Increment(3);  // txn, ok
  requests.At({0, 1}).Increment();   // kv, error
  std::vector<std::string> lines;
  requests.Visit([&](const Sample& sample) {
    lines.push_back(
        absl::StrCat(sample.labels[0].second, "/", sample.labels[1].second, "=", sample.text));
  });
  EXPECT_THAT(lines, ElementsAre("kv/ok=0", "kv/error=1", "txn/ok=3", "txn/error=0"));
}

TEST(MetricsTest, TheTextFormatHasHelpTypeAndOneLinePerSample) {
  CounterFamily events("events_total", "Events, with a \\ and\na newline.", {});
  GaugeFamily held("held", "Held now.", {{"kind", {"a\"b"}}});
  events.Get().Increment(2);
  held.At({0}).Add(5);
  held.At({0}).Add(-7);
  EXPECT_EQ(ExpositionText({&events, &held}),
            "# HELP events_total Events, with a \\\\ and\\na newline.\n"
            "# TYPE events_total counter\n"
            "events_total 2\n"
            "# HELP held Held now.\n"
            "# TYPE held gauge\n"
            "held{kind=\"a\\\"b\"} -2\n");
}

TEST(MetricsTest, AHistogramCountsEachDurationInTheFirstBucketWhoseBoundIsNotBelowIt) {
  HistogramFamily latency("latency_seconds", "Latency.");
  DurationHistogram& histogram = latency.Get();
  histogram.Observe(absl::Microseconds(500));  // exactly the first bound: le="0.0005"
  histogram.Observe(absl::Microseconds(501));  // le="0.001"
  histogram.Observe(absl::Milliseconds(75));   // le="0.1"
  histogram.Observe(absl::Seconds(61));        // +Inf only
  histogram.Observe(-absl::Seconds(1));        // as zero
  std::vector<std::string> lines;
  latency.Visit([&](const Sample& sample) {
    std::string line = std::string(sample.name);
    for (const auto& [name, value] : sample.labels) absl::StrAppend(&line, " ", name, "=", value);
    lines.push_back(absl::StrCat(line, " ", sample.text));
  });
  ASSERT_EQ(lines.size(), kDurationBucketBounds.size() + 3);
  EXPECT_EQ(lines[0], "latency_seconds_bucket le=0.0005 2");
  EXPECT_EQ(lines[1], "latency_seconds_bucket le=0.001 3");
  EXPECT_EQ(lines[6], "latency_seconds_bucket le=0.05 3");
  EXPECT_EQ(lines[7], "latency_seconds_bucket le=0.1 4");
  EXPECT_EQ(lines[15], "latency_seconds_bucket le=60 4");
  EXPECT_EQ(lines[16], "latency_seconds_bucket le=+Inf 5");
  EXPECT_EQ(lines[17], "latency_seconds_sum 61.076001");  // exact: no float rounding
  EXPECT_EQ(lines[18], "latency_seconds_count 5");
}

TEST(MetricsTest, ConcurrentUpdatesAreAllCounted) {
  CounterFamily counter("c_total", "C.");
  HistogramFamily histogram("h_seconds", "H.");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        counter.Get().Increment();
        histogram.Get().Observe(absl::Milliseconds(1));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counter.Get().Value(), 40000u);
  const DurationHistogram::Snapshot snapshot = histogram.Get().Read();
  EXPECT_EQ(snapshot.count, 40000u);
  EXPECT_EQ(snapshot.sum_nanos, 40000 * int64_t{1000000});
}

TEST(MetricsTest, EveryCatalogNameIsPrefixedUniqueAndCountersEndInTotal) {
  std::set<std::string> names;
  for (const FamilyBase* family : Metrics().families()) {
    EXPECT_TRUE(absl::StartsWith(family->name(), "registry_consul_")) << family->name();
    EXPECT_TRUE(names.insert(family->name()).second) << family->name();
    EXPECT_EQ(family->type() == MetricType::kCounter, absl::EndsWith(family->name(), "_total"))
        << family->name();
    if (family->type() == MetricType::kHistogram) {
      EXPECT_TRUE(absl::EndsWith(family->name(), "_seconds")) << family->name();
    }
    EXPECT_FALSE(family->help().empty()) << family->name();
  }
  EXPECT_EQ(names.size(), 20u);
}

TEST(MetricsTest, TheCatalogLabelsFollowTheEnumsThatIndexThem) {
  bool seen = false;
  const uint64_t before =
      Metrics().requests.At({Index(Endpoint::kSession), Index(Outcome::kUnknownOutcome)}).Value();
  Metrics().requests.At({Index(Endpoint::kSession), Index(Outcome::kUnknownOutcome)}).Increment();
  Metrics().requests.Visit([&](const Sample& sample) {
    if (sample.value == static_cast<double>(before + 1) && !seen &&
        sample.labels[0].second == "session" && sample.labels[1].second == "unknown_outcome") {
      seen = true;
    }
  });
  EXPECT_TRUE(seen);
  std::vector<std::pair<std::string, std::string>> states;
  Metrics().connection_state.Visit([&](const Sample& sample) {
    states.emplace_back(std::string(sample.labels[0].first), std::string(sample.labels[0].second));
  });
  EXPECT_THAT(states, ElementsAre(Pair("state", "connecting"), Pair("state", "connected"),
                                  Pair("state", "suspended"), Pair("state", "lost"),
                                  Pair("state", "reconnected")));
  EXPECT_THAT(MetricsExposition(), HasSubstr("# TYPE registry_consul_request_duration_seconds "
                                             "histogram\n"));
}

}  // namespace
}  // namespace registry::metrics

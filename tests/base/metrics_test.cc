// SPDX-License-Identifier: Apache-2.0
// tests/base/metrics_test.cc
//
// The metric types, the text format they are written in, and the catalog the layers register
// their families in (the families themselves: tests/instance/metric_families_test.cc).
#include "base/metrics.h"

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/metric_catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace registry::metrics {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

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

TEST(MetricCatalogTest, ListsWhatTheLayersRegisteredByName) {
  static CounterFamily* const zebra = new CounterFamily("test_catalog_zebra_total", "Z.");
  static GaugeFamily* const aardvark = new GaugeFamily("test_catalog_aardvark", "A.");
  RegisterFamilies({zebra, aardvark});
  std::vector<std::string> names;
  for (const FamilyBase* family : RegisteredFamilies()) names.push_back(family->name());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_THAT(names,
              ::testing::IsSupersetOf({"test_catalog_aardvark", "test_catalog_zebra_total"}));
  const std::string text = MetricsExposition();
  EXPECT_LT(text.find("# TYPE test_catalog_aardvark gauge"),
            text.find("# TYPE test_catalog_zebra_total counter"));
}

TEST(MetricCatalogDeathTest, TwoFamiliesOfOneNameAreRefusedNamingIt) {
  EXPECT_DEATH(
      {
        RegisterFamilies({new CounterFamily("test_catalog_twice_total", "One.")});
        RegisterFamilies({new CounterFamily("test_catalog_twice_total", "Two.")});
      },
      "test_catalog_twice_total registered twice");
}

}  // namespace
}  // namespace registry::metrics

// SPDX-License-Identifier: Apache-2.0
// base/metrics.h
//
// The building blocks of the plugin's metrics: counters, gauges and duration histograms with
// fixed buckets, grouped into families that share a name, a help text and label names. A
// family's label values are fixed when it is made, and it holds one metric for every
// combination of them, so a hot path reaches its metric by index and updates it with one
// relaxed atomic operation: no lock, no allocation, no lookup by string.
//
//   CounterFamily requests("registry_consul_requests_total", "HTTP exchanges with Consul.",
//                          {{"endpoint", {"kv", "txn"}}, {"outcome", {"ok", "http_5xx"}}});
//   requests.At({0, 1}).Increment();  // endpoint="kv", outcome="http_5xx"
//
// Families are read through Visit() (one Sample per exposed value, as Prometheus' text format
// lists them) and written out by ExpositionText() in that format (version 0.0.4).
//
// Thread safety: every method may be called from any thread. A reader sees each value as it
// was at some moment of its read; a histogram's count is the sum of the bucket counts it read,
// so its "+Inf" bucket always equals its count.
#ifndef BASE_METRICS_H_
#define BASE_METRICS_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace registry::metrics {

class Counter {
 public:
  void Increment(uint64_t by = 1) { value_.fetch_add(by, std::memory_order_relaxed); }
  uint64_t Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> value_{0};
};

class Gauge {
 public:
  void Add(int64_t delta) { value_.fetch_add(delta, std::memory_order_relaxed); }
  void Set(int64_t value) { value_.store(value, std::memory_order_relaxed); }
  int64_t Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int64_t> value_{0};
};

// Upper bounds of the duration buckets, in seconds: 0.5 ms to 60 s, then +Inf.
inline constexpr std::array<absl::string_view, 16> kDurationBucketBounds = {
    "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1",
    "0.25",   "0.5",   "1",      "2.5",   "5",    "10",    "30",   "60"};

// Observations of durations (latencies, waits); a negative duration counts as zero.
class DurationHistogram {
 public:
  void Observe(absl::Duration duration);

  struct Snapshot {
    // Observations per bucket (not cumulative); the last one is +Inf.
    std::array<uint64_t, kDurationBucketBounds.size() + 1> buckets{};
    uint64_t count = 0;
    int64_t sum_nanos = 0;
  };
  Snapshot Read() const;

 private:
  std::array<std::atomic<uint64_t>, kDurationBucketBounds.size() + 1> buckets_{};
  std::atomic<int64_t> sum_nanos_{0};
};

enum class MetricType { kCounter, kGauge, kHistogram };

// "counter", "gauge", "histogram".
absl::string_view MetricTypeName(MetricType type);

// One label of a family and every value it may take.
struct LabelSet {
  std::string name;
  std::vector<std::string> values;
};

// One exposed value: `name` is the family's, or with "_bucket", "_sum" or "_count" for a
// histogram; a bucket carries an extra "le" label. Strings live for the visit only.
struct Sample {
  absl::string_view family;
  absl::string_view help;
  MetricType type;
  absl::string_view name;
  std::vector<std::pair<absl::string_view, absl::string_view>> labels;
  double value;
  // The value as the text format writes it (integers without a fraction, sums exactly).
  std::string text;
};
using SampleVisitor = std::function<void(const Sample&)>;

// The part of a family that does not depend on its metric type.
class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help, MetricType type, std::vector<LabelSet> labels);
  virtual ~FamilyBase() = default;
  FamilyBase(const FamilyBase&) = delete;
  FamilyBase& operator=(const FamilyBase&) = delete;

  const std::string& name() const { return name_; }
  const std::string& help() const { return help_; }
  MetricType type() const { return type_; }
  // Calls `visit` for every sample of the family, in a stable order.
  void Visit(const SampleVisitor& visit) const;

 protected:
  // How many metrics the family holds: the product of its labels' value counts (1 if none).
  size_t size() const { return size_; }
  // The flat position of the metric with label values `indexes` (one per label, in order).
  size_t FlatIndex(std::initializer_list<size_t> indexes) const;

 private:
  // Emits the samples of the metric at `flat`; `sample` already has the family's fields and the
  // metric's labels.
  virtual void VisitMetric(size_t flat, Sample* sample, const SampleVisitor& visit) const = 0;

  std::string name_;
  std::string help_;
  MetricType type_;
  std::vector<LabelSet> labels_;
  size_t size_;
};

template <typename Metric>
class Family final : public FamilyBase {
 public:
  Family(std::string name, std::string help, std::vector<LabelSet> labels = {});

  // The metric with label values `indexes` (one index per label, into its `values`). An index out
  // of range is a programming error: it aborts.
  Metric& At(std::initializer_list<size_t> indexes) { return metrics_[FlatIndex(indexes)]; }
  // The only metric of a family without labels.
  Metric& Get() { return metrics_[0]; }

 private:
  void VisitMetric(size_t flat, Sample* sample, const SampleVisitor& visit) const override;

  std::vector<Metric> metrics_;
};

// Defined, and instantiated once, in metrics.cc.
template <>
void Family<Counter>::VisitMetric(size_t, Sample*, const SampleVisitor&) const;
template <>
void Family<Gauge>::VisitMetric(size_t, Sample*, const SampleVisitor&) const;
template <>
void Family<DurationHistogram>::VisitMetric(size_t, Sample*, const SampleVisitor&) const;
extern template class Family<Counter>;
extern template class Family<Gauge>;
extern template class Family<DurationHistogram>;

using CounterFamily = Family<Counter>;
using GaugeFamily = Family<Gauge>;
using HistogramFamily = Family<DurationHistogram>;

// The families in Prometheus' text exposition format: for each, "# HELP" and "# TYPE" lines,
// then its samples, one per line.
std::string ExpositionText(const std::vector<const FamilyBase*>& families);

}  // namespace registry::metrics

#endif  // BASE_METRICS_H_

// SPDX-License-Identifier: Apache-2.0
// base/metrics.cc
#include "base/metrics.h"

#include <cstdlib>
#include <type_traits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace registry::metrics {
namespace {

// kDurationBucketBounds as durations, parsed once: the strings are the one source of truth.
const std::array<absl::Duration, kDurationBucketBounds.size()>& DurationBounds() {
  static const auto* const bounds = [] {
    auto* parsed = new std::array<absl::Duration, kDurationBucketBounds.size()>();
    for (size_t i = 0; i < kDurationBucketBounds.size(); ++i) {
      double seconds = 0;
      if (!absl::SimpleAtod(kDurationBucketBounds[i], &seconds)) std::abort();
      (*parsed)[i] = absl::Seconds(seconds);
    }
    return parsed;
  }();
  return *bounds;
}

// Nanoseconds as seconds, exactly: "1.5", "0.000250001", "0".
std::string SecondsText(int64_t nanos) {
  const bool negative = nanos < 0;
  const uint64_t magnitude = negative ? 0 - static_cast<uint64_t>(nanos) : nanos;
  std::string text = absl::StrFormat("%s%d.%09d", negative ? "-" : "", magnitude / 1000000000,
                                     magnitude % 1000000000);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text;
}

// A label value as the text format quotes it.
std::string EscapeLabelValue(absl::string_view value) {
  return absl::StrReplaceAll(value, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", "\\n"}});
}

// HELP text as the text format writes it.
std::string EscapeHelp(absl::string_view help) {
  return absl::StrReplaceAll(help, {{"\\", "\\\\"}, {"\n", "\\n"}});
}

}  // namespace

void DurationHistogram::Observe(absl::Duration duration) {
  if (duration < absl::ZeroDuration()) duration = absl::ZeroDuration();
  const auto& bounds = DurationBounds();
  size_t bucket = 0;
  while (bucket < bounds.size() && duration > bounds[bucket]) ++bucket;
  buckets_[bucket].fetch_add(1, std::memory_order_relaxed);
  sum_nanos_.fetch_add(absl::ToInt64Nanoseconds(duration), std::memory_order_relaxed);
}

DurationHistogram::Snapshot DurationHistogram::Read() const {
  Snapshot snapshot;
  for (size_t i = 0; i < buckets_.size(); ++i) {
    snapshot.buckets[i] = buckets_[i].load(std::memory_order_relaxed);
    snapshot.count += snapshot.buckets[i];
  }
  snapshot.sum_nanos = sum_nanos_.load(std::memory_order_relaxed);
  return snapshot;
}

absl::string_view MetricTypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

FamilyBase::FamilyBase(std::string name, std::string help, MetricType type,
                       std::vector<LabelSet> labels)
    : name_(std::move(name)), help_(std::move(help)), type_(type), labels_(std::move(labels)) {
  size_ = 1;
  for (const LabelSet& label : labels_) size_ *= label.values.size();
}

size_t FamilyBase::FlatIndex(std::initializer_list<size_t> indexes) const {
  if (indexes.size() != labels_.size()) std::abort();
  size_t flat = 0;
  size_t label = 0;
  for (size_t index : indexes) {
    if (index >= labels_[label].values.size()) std::abort();
    flat = flat * labels_[label].values.size() + index;
    ++label;
  }
  return flat;
}

void FamilyBase::Visit(const SampleVisitor& visit) const {
  for (size_t flat = 0; flat < size_; ++flat) {
    Sample sample{name_, help_, type_, name_, {}, 0, ""};
    // Row-major: the last label varies fastest, as FlatIndex() counts.
    size_t rest = flat;
    sample.labels.resize(labels_.size());
    for (size_t label = labels_.size(); label-- > 0;) {
      const size_t count = labels_[label].values.size();
      sample.labels[label] = {labels_[label].name, labels_[label].values[rest % count]};
      rest /= count;
    }
    VisitMetric(flat, &sample, visit);
  }
}

template <typename Metric>
Family<Metric>::Family(std::string name, std::string help, std::vector<LabelSet> labels)
    : FamilyBase(std::move(name), std::move(help),
                 std::is_same_v<Metric, Counter> ? MetricType::kCounter
                 : std::is_same_v<Metric, Gauge> ? MetricType::kGauge
                                                 : MetricType::kHistogram,
                 std::move(labels)),
      metrics_(size()) {}

template <>
void Family<Counter>::VisitMetric(size_t flat, Sample* sample, const SampleVisitor& visit) const {
  const uint64_t value = metrics_[flat].Value();
  sample->value = static_cast<double>(value);
  sample->text = absl::StrCat(value);
  visit(*sample);
}

template <>
void Family<Gauge>::VisitMetric(size_t flat, Sample* sample, const SampleVisitor& visit) const {
  const int64_t value = metrics_[flat].Value();
  sample->value = static_cast<double>(value);
  sample->text = absl::StrCat(value);
  visit(*sample);
}

template <>
void Family<DurationHistogram>::VisitMetric(size_t flat, Sample* sample,
                                            const SampleVisitor& visit) const {
  const DurationHistogram::Snapshot snapshot = metrics_[flat].Read();
  const std::string bucket_name = absl::StrCat(name(), "_bucket");
  Sample bucket = *sample;
  bucket.name = bucket_name;
  bucket.labels.emplace_back("le", "");
  uint64_t cumulative = 0;
  for (size_t i = 0; i < snapshot.buckets.size(); ++i) {
    cumulative += snapshot.buckets[i];
    bucket.labels.back().second =
        i < kDurationBucketBounds.size() ? kDurationBucketBounds[i] : "+Inf";
    bucket.value = static_cast<double>(cumulative);
    bucket.text = absl::StrCat(cumulative);
    visit(bucket);
  }
  const std::string sum_name = absl::StrCat(name(), "_sum");
  sample->name = sum_name;
  sample->value = static_cast<double>(snapshot.sum_nanos) / 1e9;
  sample->text = SecondsText(snapshot.sum_nanos);
  visit(*sample);
  const std::string count_name = absl::StrCat(name(), "_count");
  sample->name = count_name;
  sample->value = static_cast<double>(snapshot.count);
  sample->text = absl::StrCat(snapshot.count);
  visit(*sample);
}

template class Family<Counter>;
template class Family<Gauge>;
template class Family<DurationHistogram>;

std::string ExpositionText(const std::vector<const FamilyBase*>& families) {
  std::string text;
  for (const FamilyBase* family : families) {
    absl::StrAppend(&text, "# HELP ", family->name(), " ", EscapeHelp(family->help()), "\n",
                    "# TYPE ", family->name(), " ", MetricTypeName(family->type()), "\n");
    family->Visit([&text](const Sample& sample) {
      absl::StrAppend(&text, sample.name);
      if (!sample.labels.empty()) {
        text += '{';
        for (size_t i = 0; i < sample.labels.size(); ++i) {
          absl::StrAppend(&text, i == 0 ? "" : ",", sample.labels[i].first, "=\"",
                          EscapeLabelValue(sample.labels[i].second), "\"");
        }
        text += '}';
      }
      absl::StrAppend(&text, " ", sample.text, "\n");
    });
  }
  return text;
}

}  // namespace registry::metrics

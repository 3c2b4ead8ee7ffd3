// SPDX-License-Identifier: Apache-2.0
// plugin/abi_metrics.cc
//
// The 1.7 entries of the C table: metrics_text and visit_metrics, over the process's metrics
// (base/metric_catalog.h).
#include <string>
#include <vector>

#include "base/metric_catalog.h"
#include "plugin/abi_internal.h"

namespace registry::plugin::internal {
namespace {

int32_t ToCType(metrics::MetricType type) {
  switch (type) {
    case metrics::MetricType::kCounter:
      return REGISTRY_METRIC_COUNTER;
    case metrics::MetricType::kGauge:
      return REGISTRY_METRIC_GAUGE;
    case metrics::MetricType::kHistogram:
      return REGISTRY_METRIC_HISTOGRAM;
  }
  return REGISTRY_METRIC_GAUGE;
}

}  // namespace

int MetricsText(char** text, size_t* text_len, RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    if (text == nullptr) return NullArgument("text");
    if (text_len == nullptr) return NullArgument("text_len");
    const std::string exposition = metrics::MetricsExposition();
    *text = CopyBytes(exposition);
    *text_len = exposition.size();
    return absl::OkStatus();
  });
}

int VisitMetrics(RegistryMetricCallback visit, void* user_data, RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    if (visit == nullptr) return NullArgument("visit");
    // Copies: the C side needs NUL-terminated strings, and a sample's views need not be.
    std::string family, help, name;
    std::vector<std::string> names, values;
    std::vector<const char*> name_ptrs, value_ptrs;
    metrics::VisitMetrics([&](const metrics::Sample& sample) {
      family = std::string(sample.family);
      help = std::string(sample.help);
      name = std::string(sample.name);
      names.assign(sample.labels.size(), "");
      values.assign(sample.labels.size(), "");
      name_ptrs.assign(sample.labels.size(), nullptr);
      value_ptrs.assign(sample.labels.size(), nullptr);
      for (size_t i = 0; i < sample.labels.size(); ++i) {
        names[i] = std::string(sample.labels[i].first);
        values[i] = std::string(sample.labels[i].second);
        name_ptrs[i] = names[i].c_str();
        value_ptrs[i] = values[i].c_str();
      }
      RegistryMetricSample c_sample{};
      c_sample.struct_size = sizeof(RegistryMetricSample);
      c_sample.family = family.c_str();
      c_sample.help = help.c_str();
      c_sample.type = ToCType(sample.type);
      c_sample.name = name.c_str();
      c_sample.label_count = sample.labels.size();
      c_sample.label_names = name_ptrs.data();
      c_sample.label_values = value_ptrs.data();
      c_sample.value = sample.value;
      visit(&c_sample, user_data);
    });
    return absl::OkStatus();
  });
}

}  // namespace registry::plugin::internal

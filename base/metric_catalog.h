// SPDX-License-Identifier: Apache-2.0
// base/metric_catalog.h
//
// The process's catalog of metric families. Each layer declares its own families, beside the
// code that updates them (consul/exchange_metrics.h, watch/watch_metrics.h,
// repository/session_metrics.h, lock/lock_metrics.h), and registers them here when they are made,
// on their first use; the composition root makes them all (instance/instance.h,
// MakeInstanceMetrics) so that a scrape lists every family, at zero, before anything happens. The
// names, help texts and label values are the contract operators alert on (docs/operations.md).
// Metrics are per process, like the log: every repository of the process adds to the same
// families.
//
// A layer reaches a series by an enum whose order is the order of the label's values:
//
//   consul::RequestMetrics().requests.At({Index(RequestEndpoint::kKv), Index(...)}).Increment();
//
// Thread safety: every function may be called from any thread; updates take no lock.
#ifndef BASE_METRIC_CATALOG_H_
#define BASE_METRIC_CATALOG_H_

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "base/metrics.h"

namespace registry::metrics {

// The prefix of every family's name.
inline constexpr char kMetricPrefix[] = "registry_consul_";

// `name` with kMetricPrefix.
inline std::string MetricName(const char* name) { return std::string(kMetricPrefix) + name; }

template <typename Enum>
constexpr size_t Index(Enum value) {
  static_assert(std::is_enum_v<Enum>);
  return static_cast<size_t>(value);
}

// Adds a layer's `families` to the catalog; each must live until the process exits (a layer's
// families are made once and never destroyed: background threads may update them to the end).
// Two families of one name are a programming error: aborts, naming it.
void RegisterFamilies(const std::vector<const FamilyBase*>& families);

// A layer's families, made and registered on the first call and never destroyed. `Families` is a
// struct of families whose `families()` lists them:
//
//   WatchFamilies& WatchMetrics() { return metrics::RegisteredOnce<WatchFamilies>(); }
template <typename Families>
Families& RegisteredOnce() {
  static Families* const made = [] {
    auto* families = new Families();
    RegisterFamilies(families->families());
    return families;
  }();
  return *made;
}

// Every registered family, by name.
std::vector<const FamilyBase*> RegisteredFamilies();

// Every registered family in Prometheus' text exposition format, by name.
std::string MetricsExposition();

// Calls `visit` for every sample of every registered family (see Sample), by family name.
void VisitMetrics(const SampleVisitor& visit);

}  // namespace registry::metrics

#endif  // BASE_METRIC_CATALOG_H_

// SPDX-License-Identifier: Apache-2.0
// lock/lock_metrics.h
//
// The lock layer's metric families (the catalog: base/metric_catalog.h), each with label `kind`:
// the kinds of lock of lock_kind.h, in LockKind order, so a series is reached by its LockKind:
//
//   SeriesOf(&LockFamilies::locks_held, LockKind::kFair).Add(1);
//
// Thread safety: as the catalog's.
#ifndef LOCK_LOCK_METRICS_H_
#define LOCK_LOCK_METRICS_H_

#include <vector>

#include "base/metric_catalog.h"
#include "base/metrics.h"
#include "lock/lock_kind.h"

namespace registry::lock {

struct LockFamilies {
  LockFamilies();
  std::vector<const metrics::FamilyBase*> families() const;

  metrics::GaugeFamily locks_held;
  metrics::GaugeFamily lock_waiters;
  metrics::CounterFamily lock_acquisitions;
  metrics::CounterFamily lock_timeouts;
  metrics::HistogramFamily lock_wait_duration;
  metrics::CounterFamily lock_losses;
  metrics::CounterFamily lock_fenced_writes_refused;
};

// Made and registered on first use; never destroyed.
LockFamilies& LockMetrics();

// The series of `family` (a member of LockFamilies) for locks of `kind`.
template <typename Metric>
Metric& SeriesOf(metrics::Family<Metric> LockFamilies::*family, LockKind kind) {
  return (LockMetrics().*family).At({metrics::Index(kind)});
}

}  // namespace registry::lock

#endif  // LOCK_LOCK_METRICS_H_

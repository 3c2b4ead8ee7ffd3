// SPDX-License-Identifier: Apache-2.0
// watch/watch_metrics.h
//
// The watch engine's metric families (the catalog: base/metric_catalog.h): active watches by
// kind, events delivered, re-listings, delivery lag and listener time.
//
// Thread safety: as the catalog's.
#ifndef WATCH_WATCH_METRICS_H_
#define WATCH_WATCH_METRICS_H_

#include <vector>

#include "base/metric_catalog.h"
#include "base/metrics.h"

namespace registry::watch {

// Label `kind` of the watch gauge: a prefix watch (a listener's) or a single-key watch (a lock's).
enum class WatchKind { kPrefix, kKey };

struct WatchFamilies {
  WatchFamilies();
  std::vector<const metrics::FamilyBase*> families() const;

  metrics::GaugeFamily watches_active;  // {kind}
  metrics::CounterFamily watch_events;
  metrics::CounterFamily watch_relists;
  metrics::HistogramFamily watch_delivery_lag;
  metrics::HistogramFamily watch_callback_duration;
};

// Made and registered on first use; never destroyed.
WatchFamilies& WatchMetrics();

}  // namespace registry::watch

#endif  // WATCH_WATCH_METRICS_H_

// SPDX-License-Identifier: Apache-2.0
// watch/watch_metrics.cc
#include "watch/watch_metrics.h"

namespace registry::watch {

using metrics::MetricName;

WatchFamilies::WatchFamilies()
    : watches_active(MetricName("watches_active"),
                     "Watches registered on the watch engine (prefix: data listeners; key: lock "
                     "monitors).",
                     {{"kind", {"prefix", "key"}}}),
      watch_events(MetricName("watch_events_total"),
                   "ADDED, UPDATED and DELETED events delivered to data listeners."),
      watch_relists(MetricName("watch_relists_total"),
                    "Subtrees read again in full after a failure or an index reset."),
      watch_delivery_lag(MetricName("watch_delivery_lag_seconds"),
                         "Time from the answer that revealed a change to the start of its "
                         "listener call."),
      watch_callback_duration(MetricName("watch_callback_duration_seconds"),
                              "Time data listeners spent in each call.") {}

std::vector<const metrics::FamilyBase*> WatchFamilies::families() const {
  return {&watches_active, &watch_events, &watch_relists, &watch_delivery_lag,
          &watch_callback_duration};
}

WatchFamilies& WatchMetrics() { return metrics::RegisteredOnce<WatchFamilies>(); }

}  // namespace registry::watch

// SPDX-License-Identifier: Apache-2.0
// lock/lock_metrics.cc
#include "lock/lock_metrics.h"

namespace registry::lock {
namespace {

using metrics::MetricName;

metrics::LabelSet KindLabel() { return {"kind", LockKindLabels()}; }

}  // namespace

LockFamilies::LockFamilies()
    : locks_held(MetricName("locks_held"), "Distributed lock holds of this process.",
                 {KindLabel()}),
      lock_waiters(MetricName("lock_waiters"), "Threads waiting to take a distributed lock.",
                   {KindLabel()}),
      lock_acquisitions(MetricName("lock_acquisitions_total"),
                        "Distributed lock holds taken (re-entries not counted).", {KindLabel()}),
      lock_timeouts(MetricName("lock_timeouts_total"),
                    "Timed lock attempts that gave up without the lock.", {KindLabel()}),
      lock_wait_duration(MetricName("lock_wait_duration_seconds"),
                         "Time from asking for a distributed lock to holding it or giving up.",
                         {KindLabel()}),
      lock_losses(MetricName("lock_losses_total"),
                  "Holds lost (session lost, lock key deleted or taken, repository closed).",
                  {KindLabel()}),
      lock_fenced_writes_refused(MetricName("lock_fenced_writes_refused_total"),
                                 "Fenced writes refused because the lock was no longer held.",
                                 {KindLabel()}) {}

std::vector<const metrics::FamilyBase*> LockFamilies::families() const {
  return {&locks_held,         &lock_waiters, &lock_acquisitions,         &lock_timeouts,
          &lock_wait_duration, &lock_losses,  &lock_fenced_writes_refused};
}

LockFamilies& LockMetrics() { return metrics::RegisteredOnce<LockFamilies>(); }

}  // namespace registry::lock

// SPDX-License-Identifier: Apache-2.0
// base/plugin_metrics.h
//
// Every metric the plugin exposes, in one place (the names, help texts and label values are the
// contract operators alert on; docs/operations.md lists them). Metrics are per process, like the
// log: every repository of the process adds to the same families. A family exists from the
// first use of Metrics(), so a scrape lists every series, at zero until something happens.
//
// A component reaches its series by the enums below, whose order is the order of the label
// values in the catalog (the lock families' `kind` values are the lock layer's: see
// DeclareLockKinds):
//
//   Metrics().requests.At({Index(Endpoint::kKv), Index(Outcome::kOk)}).Increment();
//
// Thread safety: Metrics() and every family may be used from any thread; updates take no lock.
#ifndef BASE_PLUGIN_METRICS_H_
#define BASE_PLUGIN_METRICS_H_

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

#include "base/metrics.h"

namespace registry::metrics {

// Label `endpoint` of the request families: the Consul API a request went to. Blocking reads
// (watches and lock monitors: a request with a wait) are their own endpoint, whatever their path.
enum class Endpoint { kKv, kTxn, kSession, kStatus, kOther, kBlockingQuery };
// Label `outcome` of the request families: how one HTTP exchange ended. A 404 of a read is the
// store saying "absent" and counts as ok.
enum class Outcome { kOk, kHttp4xx, kHttp5xx, kTransportError, kUnknownOutcome, kCancelled };
// Label `outcome` of the session renewals.
enum class RenewalOutcome { kOk, kFailed };
// Label `kind` of the watch gauge: a prefix watch (a listener's) or a single-key watch (a lock's).
enum class WatchKind { kPrefix, kKey };
// Label `state` of the connection gauge: an open repository's last connection state (connecting:
// none yet).
enum class StateLabel { kConnecting, kConnected, kSuspended, kLost, kReconnected };

template <typename Enum>
constexpr size_t Index(Enum value) {
  static_assert(std::is_enum_v<Enum>);
  return static_cast<size_t>(value);
}

struct PluginMetrics {
  PluginMetrics();

  // Requests (consul/ and the watch engine's blocking reads).
  CounterFamily requests;            // {endpoint, outcome}
  HistogramFamily request_duration;  // {endpoint}, not for blocking reads

  // The instance sessions (repository/).
  CounterFamily session_creations;
  CounterFamily session_renewals;  // {outcome}
  CounterFamily session_losses;
  CounterFamily session_restore_passes;
  CounterFamily session_keys_restored;

  // Watches (watch/).
  GaugeFamily watches_active;  // {kind}
  CounterFamily watch_events;
  CounterFamily watch_relists;
  HistogramFamily watch_delivery_lag;
  HistogramFamily watch_callback_duration;

  // Locks (lock/), each {kind}: the values DeclareLockKinds() declared, none without it.
  GaugeFamily locks_held;
  GaugeFamily lock_waiters;
  CounterFamily lock_acquisitions;
  CounterFamily lock_timeouts;
  HistogramFamily lock_wait_duration;
  CounterFamily lock_losses;
  CounterFamily lock_fenced_writes_refused;

  // Connection states (repository/).
  GaugeFamily connection_state;  // {state}

  // Every family above, in this order.
  std::vector<const FamilyBase*> families() const;
};

// The process's metrics, made on first use and never destroyed (background threads may update
// them until the process exits).
PluginMetrics& Metrics();

// Declares the values of label `kind` of the lock families: the lock layer's kinds of lock
// (lock/lock_kind.h), which it indexes by its own LockKind. base/ cannot name them, so the lock
// layer declares them while its library is loaded, before anything uses Metrics(). Declaring
// other values once Metrics() exists is a programming error: it aborts, naming the values.
// Returns true (for use in an initializer).
bool DeclareLockKinds(std::vector<std::string> kinds);

// The series of `family` (a member of PluginMetrics) whose one label has value `label`:
//   SeriesOf(&PluginMetrics::connection_state, StateLabel::kLost).Add(1);
template <typename Metric, typename Enum>
Metric& SeriesOf(Family<Metric> PluginMetrics::*family, Enum label) {
  return (Metrics().*family).At({Index(label)});
}

// Every family in Prometheus' text exposition format.
std::string MetricsExposition();

// Calls `visit` for every sample of every family (see Sample).
void VisitMetrics(const SampleVisitor& visit);

}  // namespace registry::metrics

#endif  // BASE_PLUGIN_METRICS_H_

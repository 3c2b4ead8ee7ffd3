// SPDX-License-Identifier: Apache-2.0
// base/plugin_metrics.cc
#include "base/plugin_metrics.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <utility>

namespace registry::metrics {
namespace {

constexpr char kPrefix[] = "registry_consul_";

std::string Named(const char* name) { return std::string(kPrefix) + name; }

LabelSet EndpointLabel() {
  return {"endpoint", {"kv", "txn", "session", "status", "other", "blocking_query"}};
}
// The lock kinds DeclareLockKinds() declared, and whether Metrics() has used them.
struct LockKinds {
  std::mutex mu;
  std::vector<std::string> values;  // guarded by mu
  bool used = false;                // guarded by mu
};
LockKinds& DeclaredLockKinds() {
  static LockKinds* const kinds = new LockKinds();
  return *kinds;
}

LabelSet LockKindLabel() {
  LockKinds& kinds = DeclaredLockKinds();
  std::lock_guard<std::mutex> lock(kinds.mu);
  kinds.used = true;
  return {"kind", kinds.values};
}

}  // namespace

PluginMetrics::PluginMetrics()
    : requests(
          Named("requests_total"),
          "HTTP exchanges with Consul, by API and by how they ended (transport_error: no "
          "server reached; unknown_outcome: sent, and no complete answer came).",
          {EndpointLabel(),
           {"outcome",
            {"ok", "http_4xx", "http_5xx", "transport_error", "unknown_outcome", "cancelled"}}}),
      request_duration(Named("request_duration_seconds"),
                       "Time from sending a request to its answer or failure (blocking reads "
                       "excluded: they wait by design).",
                       {EndpointLabel()}),
      session_creations(Named("session_creations_total"),
                        "Instance sessions created (the first one and every replacement)."),
      session_renewals(Named("session_renewals_total"), "Renewals of the instance session.",
                       {{"outcome", {"ok", "failed"}}}),
      session_losses(Named("session_losses_total"),
                     "Instance sessions lost (invalidated, or not renewed in time)."),
      session_restore_passes(Named("session_restore_passes_total"),
                             "Passes binding every ephemeral key to a new session."),
      session_keys_restored(Named("session_keys_restored_total"),
                            "Ephemeral keys bound again to a new session."),
      watches_active(Named("watches_active"),
                     "Watches registered on the watch engine (prefix: data listeners; key: lock "
                     "monitors).",
                     {{"kind", {"prefix", "key"}}}),
      watch_events(Named("watch_events_total"),
                   "ADDED, UPDATED and DELETED events delivered to data listeners."),
      watch_relists(Named("watch_relists_total"),
                    "Subtrees read again in full after a failure or an index reset."),
      watch_delivery_lag(Named("watch_delivery_lag_seconds"),
                         "Time from the answer that revealed a change to the start of its "
                         "listener call."),
      watch_callback_duration(Named("watch_callback_duration_seconds"),
                              "Time data listeners spent in each call."),
      locks_held(Named("locks_held"), "Distributed lock holds of this process.", {LockKindLabel()}),
      lock_waiters(Named("lock_waiters"), "Threads waiting to take a distributed lock.",
                   {LockKindLabel()}),
      lock_acquisitions(Named("lock_acquisitions_total"),
                        "Distributed lock holds taken (re-entries not counted).",
                        {LockKindLabel()}),
      lock_timeouts(Named("lock_timeouts_total"),
                    "Timed lock attempts that gave up without the lock.", {LockKindLabel()}),
      lock_wait_duration(Named("lock_wait_duration_seconds"),
                         "Time from asking for a distributed lock to holding it or giving up.",
                         {LockKindLabel()}),
      lock_losses(Named("lock_losses_total"),
                  "Holds lost (session lost, lock key deleted or taken, repository closed).",
                  {LockKindLabel()}),
      lock_fenced_writes_refused(Named("lock_fenced_writes_refused_total"),
                                 "Fenced writes refused because the lock was no longer held.",
                                 {LockKindLabel()}),
      connection_state(
          Named("connection_state"), "Open repositories whose last connection state is `state`.",
          {{"state", {"connecting", "connected", "suspended", "lost", "reconnected"}}}) {}

std::vector<const FamilyBase*> PluginMetrics::families() const {
  return {&requests,
          &request_duration,
          &session_creations,
          &session_renewals,
          &session_losses,
          &session_restore_passes,
          &session_keys_restored,
          &watches_active,
          &watch_events,
          &watch_relists,
          &watch_delivery_lag,
          &watch_callback_duration,
          &locks_held,
          &lock_waiters,
          &lock_acquisitions,
          &lock_timeouts,
          &lock_wait_duration,
          &lock_losses,
          &lock_fenced_writes_refused,
          &connection_state};
}

PluginMetrics& Metrics() {
  static PluginMetrics* const metrics = new PluginMetrics();
  return *metrics;
}

bool DeclareLockKinds(std::vector<std::string> kinds) {
  LockKinds& declared = DeclaredLockKinds();
  std::lock_guard<std::mutex> lock(declared.mu);
  if (declared.used && declared.values != kinds) {
    std::string named;
    for (const std::string& kind : kinds) named += " " + kind;
    std::fprintf(stderr, "registry metrics: lock kinds declared after the metrics were made:%s\n",
                 named.c_str());
    std::abort();
  }
  declared.values = std::move(kinds);
  return true;
}

std::string MetricsExposition() { return ExpositionText(Metrics().families()); }

void VisitMetrics(const SampleVisitor& visit) {
  for (const FamilyBase* family : Metrics().families()) family->Visit(visit);
}

}  // namespace registry::metrics

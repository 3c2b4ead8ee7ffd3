// SPDX-License-Identifier: Apache-2.0
// repository/session_metrics.cc
#include "repository/session_metrics.h"

namespace registry {

using metrics::MetricName;

SessionFamilies::SessionFamilies()
    : session_creations(MetricName("session_creations_total"),
                        "Instance sessions created (the first one and every replacement)."),
      session_renewals(MetricName("session_renewals_total"), "Renewals of the instance session.",
                       {{"outcome", {"ok", "failed"}}}),
      session_losses(MetricName("session_losses_total"),
                     "Instance sessions lost (invalidated, or not renewed in time)."),
      session_restore_passes(MetricName("session_restore_passes_total"),
                             "Passes binding every ephemeral key to a new session."),
      session_keys_restored(MetricName("session_keys_restored_total"),
                            "Ephemeral keys bound again to a new session."),
      connection_state(
          MetricName("connection_state"),
          "Open repositories whose last connection state is `state`.",
          {{"state", {"connecting", "connected", "suspended", "lost", "reconnected"}}}) {}

std::vector<const metrics::FamilyBase*> SessionFamilies::families() const {
  return {&session_creations,      &session_renewals,      &session_losses,
          &session_restore_passes, &session_keys_restored, &connection_state};
}

SessionFamilies& SessionMetrics() { return metrics::RegisteredOnce<SessionFamilies>(); }

}  // namespace registry

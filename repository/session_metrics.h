// SPDX-License-Identifier: Apache-2.0
// repository/session_metrics.h
//
// The repository's metric families (the catalog: base/metric_catalog.h): the instance sessions
// (creations, renewals, losses, restores) and the connection state of open repositories.
//
// Thread safety: as the catalog's.
#ifndef REPOSITORY_SESSION_METRICS_H_
#define REPOSITORY_SESSION_METRICS_H_

#include <vector>

#include "base/metric_catalog.h"
#include "base/metrics.h"

namespace registry {

// Label `outcome` of the session renewals.
enum class RenewalOutcome { kOk, kFailed };
// Label `state` of the connection gauge: an open repository's last connection state (connecting:
// none yet).
enum class ConnectionStateLabel { kConnecting, kConnected, kSuspended, kLost, kReconnected };

struct SessionFamilies {
  SessionFamilies();
  std::vector<const metrics::FamilyBase*> families() const;

  metrics::CounterFamily session_creations;
  metrics::CounterFamily session_renewals;  // {outcome}
  metrics::CounterFamily session_losses;
  metrics::CounterFamily session_restore_passes;
  metrics::CounterFamily session_keys_restored;
  metrics::GaugeFamily connection_state;  // {state}
};

// Made and registered on first use; never destroyed.
SessionFamilies& SessionMetrics();

}  // namespace registry

#endif  // REPOSITORY_SESSION_METRICS_H_

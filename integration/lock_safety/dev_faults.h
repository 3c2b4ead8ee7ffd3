// SPDX-License-Identifier: Apache-2.0
// integration/lock_safety/dev_faults.h
//
// The faults the lock-safety harness injects into a consul-dev-server process (over its
// /v1/_dev/ endpoints), one per period, in rotation: a latency spell, a burst of 500s, dropped
// connections, every connection dropped, and the forced expiry of the holders' sessions while a
// long critical section runs.
//
// Thread safety: InjectFaults runs on the caller's thread until `done` is notified.
#ifndef REGISTRY_INTEGRATION_LOCK_SAFETY_DEV_FAULTS_H_
#define REGISTRY_INTEGRATION_LOCK_SAFETY_DEV_FAULTS_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/synchronization/notification.h"

namespace registry::integration {

struct FaultCounts {
  int latency = 0;
  int fail_bursts = 0;
  int drops = 0;
  int drop_alls = 0;
  int expiries = 0;  // holder sessions expired
};

// Injects one fault per period into the dev server at `address` until `done` is notified. The
// sections log their steps to `log` (critical_section.sh); `holder_sessions` names the sessions
// holding the lock now (none if nobody holds), all of which an expiry fault expires, so that the
// long section's holder is among them whatever the lock's kind. Test failures are recorded for
// faults that could not be injected.
FaultCounts InjectFaults(const std::string& address, const std::string& log,
                         const std::function<std::vector<std::string>()>& holder_sessions,
                         absl::Notification& done);

// The sessions holding a lock now, for `holder_sessions`: the one bound to the Consul key
// `lock_key` (a lock's, or a fair lock's owner key), or none.
std::vector<std::string> LockKeyHolders(const std::string& address, const std::string& lock_key);
// Every holder the JSON record at `record_key` (a semaphore's or read/write lock's) names; an
// entry there is "<session>.<16 hex>". The contenders' entries alone do not say: a waiting
// contender's entry is bound to its session too.
std::vector<std::string> RecordHolders(const std::string& address, const std::string& record_key);

// "N latency spells, N 500-bursts, ..." for a report.
std::string Describe(const FaultCounts& counts);

}  // namespace registry::integration

#endif  // REGISTRY_INTEGRATION_LOCK_SAFETY_DEV_FAULTS_H_

// SPDX-License-Identifier: Apache-2.0
// repository/session_calls.h
//
// SessionCalls makes the instance session's own requests: create it (on the session node,
// session_node.h), renew it within a budget, destroy it, and delete the keys it still holds
// before a clean close. Each is one client call with its own timeout, cancelled by the keeper's
// canceller; it keeps no state but the session node's registration. The session keeper decides
// when each is made, and makes them with none of its locks held.
//
// Thread safety: all methods may be called concurrently from any thread.
#ifndef REPOSITORY_SESSION_CALLS_H_
#define REPOSITORY_SESSION_CALLS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/random/bit_gen_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/limits.h"
#include "consul/canceller.h"
#include "consul/client.h"
#include "consul/session.h"
#include "repository/session_node.h"

namespace registry {

struct SessionKeeperOptions {
  std::string session_name;
  absl::Duration ttl = limits::kDefaultSessionTtl;
  absl::Duration lock_delay = limits::kDefaultLockDelay;
  absl::Duration lock_retry = limits::kDefaultLockRetry;
  absl::Duration request_timeout = limits::kDefaultRequestTimeout;
  // The catalog node of the sessions (session_node.h); empty: the agent's node.
  std::string session_node = std::string(limits::kDefaultSessionNode);
};

// Delay before a failed renewal, or a failed destroy of a lost session, is made again: about once
// a second, as Consul's own client does, so that a renewal retried through a leader election
// lands as soon as a new leader serves; a short TTL retries sooner.
absl::Duration SessionRetryDelay(const SessionKeeperOptions& options, absl::BitGenRef gen);
// Delay before the next session create after `failures` failed ones in a row.
absl::Duration SessionCreateBackoff(const SessionKeeperOptions& options, int failures,
                                    absl::BitGenRef gen);

class SessionCalls {
 public:
  // `client` and `canceller` must outlive this object.
  SessionCalls(consul::Client& client, consul::Canceller& canceller,
               const SessionKeeperOptions& options);

  // Creates a session (Behavior=delete, TTL-only, the options' name, TTL and lock-delay),
  // giving up at `deadline`. A create cut by the deadline may still have made one: it expires by
  // its TTL.
  absl::StatusOr<std::string> Create(absl::Time deadline);
  // Renews `id` in a call cut after `budget` (at most the request timeout); nullopt when the
  // server no longer knows it.
  absl::StatusOr<std::optional<consul::SessionInfo>> Renew(const std::string& id,
                                                           absl::Duration budget);
  // Destroys `id` (best effort, within `timeout`); returns the client's status.
  absl::Status Destroy(const std::string& id, consul::Canceller* canceller, absl::Duration timeout);
  // Deletes each of `keys` that `session` still holds, before a clean close destroys it (the
  // session's end would put a lock-delay on them). Best effort, until `deadline`: a key left is
  // deleted by the session's end.
  void DeleteKeysHeldBy(const std::string& session, const std::vector<std::string>& keys,
                        absl::Time deadline);

 private:
  consul::Client& client_;
  consul::Canceller& canceller_;
  const SessionKeeperOptions options_;
  SessionNode node_;
};

}  // namespace registry

#endif  // REPOSITORY_SESSION_CALLS_H_

// SPDX-License-Identifier: Apache-2.0
// repository/session_calls.cc
#include "repository/session_calls.h"

#include <algorithm>
#include <utility>

#include "base/backoff.h"
#include "base/status_macros.h"
#include "consul/session.h"
#include "consul/txn.h"
#include "repository/ephemeral_writer.h"

namespace registry {

absl::Duration SessionRetryDelay(const SessionKeeperOptions& options, absl::BitGenRef gen) {
  const absl::Duration every =
      std::clamp(options.ttl / 10, absl::Milliseconds(50), absl::Seconds(1));
  return BackoffDelay(every, every, 1, gen);
}

absl::Duration SessionCreateBackoff(const SessionKeeperOptions& options, int failures,
                                    absl::BitGenRef gen) {
  const absl::Duration first =
      std::clamp(options.ttl / 10, absl::Milliseconds(50), absl::Seconds(1));
  const absl::Duration max = std::clamp(options.ttl / 4, first, absl::Seconds(10));
  return BackoffDelay(first, max, failures, gen);
}

SessionCalls::SessionCalls(consul::Client& client, consul::Canceller& canceller,
                           const SessionKeeperOptions& options)
    : client_(client), canceller_(canceller), options_(options), node_(options.session_node) {}

absl::StatusOr<std::string> SessionCalls::Create(absl::Time deadline) {
  consul::SessionCreateOptions create;
  create.name = options_.session_name;
  create.behavior = consul::SessionBehavior::kDelete;
  create.ttl = options_.ttl;
  create.lock_delay = options_.lock_delay;
  // A create cut by the deadline may still have made a session: it expires by its TTL.
  consul::Canceller call(&canceller_, deadline);
  return node_.CreateSession(client_, std::move(create), &call);
}

absl::Status SessionCalls::Destroy(const std::string& id, consul::Canceller* canceller,
                                   absl::Duration timeout) {
  ASSIGN_OR_RETURN(consul::HttpRequest request, consul::BuildSessionDestroyRequest(id));
  request.timeout = timeout;
  ASSIGN_OR_RETURN(consul::HttpResponse response, client_.Execute(request, canceller));
  return consul::ParseSessionDestroyResponse(request, response);
}

absl::StatusOr<std::optional<consul::SessionInfo>> SessionCalls::Renew(const std::string& id,
                                                                       absl::Duration budget) {
  ASSIGN_OR_RETURN(consul::HttpRequest request, consul::BuildSessionRenewRequest(id));
  // The call may take until the loss deadline (`budget`), and no longer: the hold must end then,
  // whatever it would have said. Not less either: during an election a follower holds the
  // renewal until a leader is elected, then answers, and a call cut sooner would read a routine
  // election as a lost session. The client gives each server its share (client.h), so one server
  // that holds requests cannot take it all while another would answer.
  request.timeout = std::min(absl::Ceil(budget, absl::Milliseconds(1)), options_.request_timeout);
  ASSIGN_OR_RETURN(consul::HttpResponse response, client_.Execute(request, &canceller_));
  return consul::ParseSessionRenewResponse(request, response);
}

void SessionCalls::DeleteKeysHeldBy(const std::string& session,
                                    const std::vector<std::string>& keys, absl::Time deadline) {
  // check-session makes each delete conditional: a key another session took since (after an
  // exclusive write lost to it, say) is not ours to delete. One refused key rolls back its whole
  // batch, which is then tried key by key.
  auto attempt = [&](size_t begin, size_t end) {
    std::vector<consul::TxnOp> ops;
    for (size_t i = begin; i < end; ++i) {
      ops.push_back(consul::TxnOp::CheckSession(keys[i], session));
      ops.push_back(consul::TxnOp::Delete(keys[i]));
    }
    consul::Canceller root;
    consul::Canceller call(&root, deadline);
    absl::StatusOr<consul::TxnResult> result = client_.Txn(ops, &call);
    return result.ok() && result->committed;
  };
  for (size_t begin = 0; begin < keys.size() && absl::Now() < deadline; begin += kMaxKeysPerBatch) {
    const size_t end = std::min(keys.size(), begin + kMaxKeysPerBatch);
    if (attempt(begin, end) || end - begin == 1) continue;
    for (size_t i = begin; i < end && absl::Now() < deadline; ++i) attempt(i, i + 1);
  }
}

}  // namespace registry

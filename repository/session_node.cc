// SPDX-License-Identifier: Apache-2.0
#include "repository/session_node.h"

#include <utility>

#include "base/log.h"
#include "consul/catalog.h"

namespace registry {
namespace {

// A registration that failed this way will fail the same way next time.
bool SettlesTheRegistration(const absl::Status& status) {
  return status.ok() || absl::IsPermissionDenied(status) || absl::IsNotFound(status) ||
         absl::IsInvalidArgument(status) || absl::IsFailedPrecondition(status);
}

}  // namespace

void SessionNode::RegisterUnlessSettled(consul::Client& client, consul::Canceller* canceller) {
  {
    absl::MutexLock lock(&mu_);
    if (registration_settled_) return;
  }
  const absl::Status registered = client.RegisterNode(name_, canceller);
  if (SettlesTheRegistration(registered)) {
    absl::MutexLock lock(&mu_);
    registration_settled_ = true;
    registered_ = registered.ok();
  }
  if (!registered.ok()) {
    Log(LogLevel::kInfo, "session", "registering the session node '", name_,
        "' failed: ", registered.ToString());
  }
}

bool SessionNode::ForgetOwnRegistration() {
  absl::MutexLock lock(&mu_);
  if (!registered_) return false;
  registered_ = false;
  registration_settled_ = false;
  return true;
}

absl::StatusOr<std::string> SessionNode::CreateSession(consul::Client& client,
                                                       consul::SessionCreateOptions create,
                                                       consul::Canceller* canceller) {
  if (name_.empty()) return client.CreateSession(create, canceller);
  RegisterUnlessSettled(client, canceller);
  create.node = name_;
  absl::StatusOr<std::string> id = client.CreateSession(create, canceller);
  if (id.ok() || !consul::IsMissingNodeAnswer(id.status())) return id;
  if (ForgetOwnRegistration()) {
    // Registered by us, and deregistered since (an operator, a catalog cleanup): once more.
    RegisterUnlessSettled(client, canceller);
    id = client.CreateSession(create, canceller);
    if (id.ok() || !consul::IsMissingNodeAnswer(id.status())) return id;
  }
  {
    absl::MutexLock lock(&mu_);
    if (!std::exchange(warned_, true)) {
      Log(LogLevel::kWarn, "session", "the session node '", name_,
          "' is not in Consul's catalog and could not be registered; the instance session "
          "belongs to the node of the Consul agent it was created through, and ends if that "
          "node is removed (a server removed by autopilot). Give the token node \"",
          name_, "\" write, register the node once, or talk to a local client agent");
    }
  }
  create.node.clear();
  return client.CreateSession(create, canceller);
}

}  // namespace registry

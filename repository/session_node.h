// SPDX-License-Identifier: Apache-2.0
// repository/session_node.h
//
// SessionNode decides which catalog node each new instance session belongs to.
//
// Consul invalidates every session of a node it deregisters, and a session's default node is
// the node of the agent its create went to: for an instance that talks straight to the servers,
// a server's node. When autopilot removes a server cut off for some seconds, Consul deregisters
// its node and takes along the sessions of healthy instances that happened to create theirs
// through it. So the instance sessions belong to a node of the plugin's own (the `sessionNode`
// prop, default "registry-consul"), registered in the catalog as an external node with no check:
// no agent's failure or removal deregisters it, and the sessions live exactly as long as they
// are renewed.
//
//  - Before a create the node is registered, until one registration is settled (done, or refused
//    for good: the token may lack `node "<name>" { policy = "write" }`, which is not an error,
//    since an operator or another instance may have registered it already).
//  - A create refused because the catalog does not know the node ("Missing node registration")
//    after this instance registered it (someone deregistered it since) registers it again and
//    makes the create once more.
//  - Otherwise such a create is made again on the agent's node, and a warning (once per
//    instance) says what that risks and how to avoid it.
//  - An empty name keeps Consul's default, the agent's node, and registers nothing.
//
// Thread safety: all methods may be called concurrently from any thread.
#ifndef REPOSITORY_SESSION_NODE_H_
#define REPOSITORY_SESSION_NODE_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "consul/canceller.h"
#include "consul/client.h"
#include "consul/session.h"

namespace registry {

class SessionNode {
 public:
  explicit SessionNode(std::string name) : name_(std::move(name)) {}

  // Creates a session as `create` says, on this node when it can (see above); returns its id.
  // Errors: what the client reports for the create.
  absl::StatusOr<std::string> CreateSession(consul::Client& client,
                                            consul::SessionCreateOptions create,
                                            consul::Canceller* canceller);

 private:
  // Registers the node unless a registration is settled already.
  void RegisterUnlessSettled(consul::Client& client, consul::Canceller* canceller);
  // If this instance's own registration succeeded, forgets it (the catalog lost the node) and
  // returns true; otherwise returns false.
  bool ForgetOwnRegistration();

  const std::string name_;
  absl::Mutex mu_;
  bool registration_settled_ ABSL_GUARDED_BY(mu_) = false;
  bool registered_ ABSL_GUARDED_BY(mu_) = false;  // the settled registration was ours, and ok
  bool warned_ ABSL_GUARDED_BY(mu_) = false;      // about creating on the agent's node
};

}  // namespace registry

#endif  // REPOSITORY_SESSION_NODE_H_

// SPDX-License-Identifier: Apache-2.0
// repository/instance_session.h
//
// The instance session as code built on a repository sees it (distributed locks): one Consul
// session per repository instance, never one per lock or per key. The composition root
// (instance/instance.h) hands it to the lock manager with the rest of what it uses
// (LockManagerParts, lock/lock_manager.h).
//
//   ASSIGN_OR_RETURN(std::string id, session.AcquireSessionId(absl::InfiniteFuture()));
//   client.KvPut(lock_key, value, {.acquire = id}, &closing);
//
// Session events reach observers in order, as tasks on the repository's serial executor (never on
// the thread that renews), one at a time, with no repository lock held, each before connection
// listeners hear of the same change: kLost names a session that is gone (every key and lock it held
// is lost, or will be within one TTL at most if the server still has it, and is no longer renewed);
// kCreated names the new live session. Observers must return promptly.
//
// Thread safety: all methods may be called concurrently from any thread.
#ifndef REPOSITORY_INSTANCE_SESSION_H_
#define REPOSITORY_INSTANCE_SESSION_H_

#include <functional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace registry {

class InstanceSession {
 public:
  enum class EventKind { kCreated, kLost };
  struct Event {
    EventKind kind;
    std::string session_id;
  };
  using Observer = std::function<void(const Event&)>;

  virtual ~InstanceSession() = default;

  // Returns the id of the live instance session, creating the session if none exists yet, or
  // waiting (at most about one TTL) while a lost one is being replaced; never past `deadline`.
  // Errors: FailedPrecondition after Close(); Unavailable when no session could be created;
  // DeadlineExceeded when `deadline` passed first (a create cut by it may leave a session on
  // the server, which expires by its TTL).
  virtual absl::StatusOr<std::string> AcquireSessionId(absl::Time deadline) = 0;

  // Runs `write`, which leaves `consul_key` (and with `tree` every key below it) persistent or
  // deleted, ordered against the instance's ephemeral writes; once it succeeds the instance no
  // longer re-creates those keys after a session loss. For writes made outside the repository's
  // own methods, such as fenced writes. Returns what `write` returns.
  virtual absl::Status PersistentWrite(absl::string_view consul_key, bool tree,
                                       absl::FunctionRef<absl::Status()> write) = 0;

  // The live session id, or "" when there is none (never created, lost, or closed).
  virtual std::string CurrentSessionId() = 0;

  // Tells the keeper that the server called `session_id` invalid (e.g. an acquire refused with
  // consul::TxnFailure::kInvalidSession): it checks the session at once instead of at the
  // next renewal.
  virtual void ReportSessionInvalid(absl::string_view session_id) = 0;

  // Registers `observer`; returns an id for removal. After RemoveSessionObserver returns the
  // observer is not called again (unless it is removing itself from inside its own call).
  virtual int AddSessionObserver(Observer observer) = 0;
  virtual void RemoveSessionObserver(int id) = 0;
};

}  // namespace registry

#endif  // REPOSITORY_INSTANCE_SESSION_H_

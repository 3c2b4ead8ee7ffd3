// SPDX-License-Identifier: Apache-2.0
// repository/ephemeral_writer.h
//
// Single attempts at binding a Consul key to a session, each one atomic. A non-exclusive bind is
// one "lock" op unless another session holds the key; otherwise (and for exclusive binds) one GET
// learns the key's state, then one transaction whose first op re-checks that state. Callers loop:
// they own the session, the retry timer and the bookkeeping of which keys are theirs.
//
// Consul semantics relied on (docs/consul-behaviour.md): a txn "lock" op is refused while the
// key is under lock-delay (the key's last holder died within its session's LockDelay) and when
// another session holds the key; a "set" keeps the holder, so taking a key from another session
// is "delete" then "lock" in the same txn.
//
// Thread safety: pure functions over a thread-safe Client.
#ifndef REPOSITORY_EPHEMERAL_WRITER_H_
#define REPOSITORY_EPHEMERAL_WRITER_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "consul/client.h"

namespace registry {

enum class BindOutcome {
  kBound,       // the key holds the value and belongs to the session
  kExists,      // exclusive only: the key exists and is not ours to take
  kChanged,     // the key changed between the read and the txn: try again now
  kLockDelay,   // refused by a lock-delay: try again after a pause
  kBadSession,  // the server does not know the session (it expired or was destroyed)
};

const char* BindOutcomeName(BindOutcome outcome);

struct BindRequest {
  std::string consul_key;
  std::string value;
  std::string session;  // the live session to bind the key to
  // Exclusive: bind only if the key is absent, or held by one of `own_sessions` (earlier
  // sessions of the same instance). Otherwise: take the key whoever holds it.
  bool exclusive = false;
  absl::flat_hash_set<std::string> own_sessions;
};

// One attempt. Errors are the client's (Unavailable, Cancelled, ...); refusals are outcomes.
absl::StatusOr<BindOutcome> AttemptBind(consul::Client& client, const BindRequest& request,
                                        consul::Canceller* canceller);

// One attempt at creating `consul_key` bound to `session` only if it is absent (the txn is
// check-not-exists + lock, so among concurrent callers at most one commits). kBound iff this
// attempt created it; kExists if it exists (whoever holds it).
absl::StatusOr<BindOutcome> AttemptCreateExclusive(consul::Client& client,
                                                   absl::string_view consul_key,
                                                   absl::string_view value,
                                                   absl::string_view session,
                                                   consul::Canceller* canceller);

// Keys per transaction of AttemptCreateBatch: two ops each, within Consul 1.8.7's limit of 64
// ops per transaction (128 since 1.14).
inline constexpr size_t kMaxKeysPerBatch = 32;

struct BatchBindOutcome {
  // kBound: every key is bound. kBadSession, kLockDelay: refused for that reason (nothing
  // written). kExists: nothing written because the keys at `existing` (indexes into the
  // requests) exist: bind them one by one, then send the rest again.
  BindOutcome outcome = BindOutcome::kBound;
  std::vector<size_t> existing;
};

// One transaction creating every key of `requests` (at most kMaxKeysPerBatch) bound to its
// session if it is absent: check-not-exists + lock per key, so it binds all or none. After a
// session loss the server has deleted the lost session's keys, so one such transaction restores
// many keys in one round trip. Errors are the client's.
absl::StatusOr<BatchBindOutcome> AttemptCreateBatch(consul::Client& client,
                                                    absl::Span<const BindRequest> requests,
                                                    consul::Canceller* canceller);

// After an attempt at binding `consul_key` = `value` to `session` failed with an unknown
// outcome (consul::IsUnknownOutcome), reads the key to learn what became of it: kBound if the key
// now holds `value` bound to `session`, kChanged if not (the attempt was not applied, or the key
// changed since: attempt again). With `held_before` (the key already held `value` bound to
// `session` before an exclusive attempt, which therefore cannot have created it) a bound key is
// kExists. Errors are the read's.
absl::StatusOr<BindOutcome> ResolveUnknownOutcome(consul::Client& client,
                                                  absl::string_view consul_key,
                                                  absl::string_view value,
                                                  absl::string_view session, bool held_before,
                                                  consul::Canceller* canceller);

}  // namespace registry

#endif  // REPOSITORY_EPHEMERAL_WRITER_H_

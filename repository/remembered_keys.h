// SPDX-License-Identifier: Apache-2.0
// repository/remembered_keys.h
//
// RememberedKeys holds the ephemeral keys an instance wrote, each with its value, whether it was
// an exclusive claim, and the session it was last bound to, so that the session keeper can bind
// them to a new session after a loss. It also orders the writes that change them:
//
//  - Ephemeral writes and restore batches hold write_order() exclusively for one attempt at a
//    time (the session keeper takes it).
//  - Persistent writes (Persist, Update, Delete, PersistBatch: the repository calls
//    PersistentWrites and Update here, not through the keeper) hold it shared, then forget (or,
//    for Update, refresh) what they overwrote: on success, and when the outcome is unknown
//    (consul::IsUnknownOutcome: the write may land), so that no rebind after a session loss undoes
//    it.
//
// So the remembered key -> value map always matches the last write that reached the server.
//
// Lock order: write_order() before the session keeper's and the key restorer's mutexes, which
// come before this class's own mutex (the innermost: nothing is called while holding it).
//
// Thread safety: all methods may be called concurrently from any thread.
#ifndef REPOSITORY_REMEMBERED_KEYS_H_
#define REPOSITORY_REMEMBERED_KEYS_H_

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

namespace registry {

class RememberedKeys {
 public:
  struct Key {
    std::string value;
    bool exclusive = false;
    std::string bound_session;  // the session the key was last bound to
  };

  // Orders ephemeral writes (exclusive) against persistent ones (shared): see the file comment.
  absl::Mutex& write_order() ABSL_LOCK_RETURNED(write_order_) { return write_order_; }

  // Runs `write` (a write of every key of `consul_keys`, and with `tree` of everything under
  // each key + "/") holding write_order() shared; forgets those keys unless `write` failed for
  // sure.
  absl::Status PersistentWrites(absl::Span<const std::string> consul_keys, bool tree,
                                absl::FunctionRef<absl::Status()> write)
      ABSL_LOCKS_EXCLUDED(write_order_, mu_);
  // Runs `update` (which keeps the key's holder); a remembered `consul_key` is rebound with
  // `value` from then on unless `update` failed for sure.
  absl::Status Update(absl::string_view consul_key, absl::string_view value,
                      absl::FunctionRef<absl::Status()> update)
      ABSL_LOCKS_EXCLUDED(write_order_, mu_);

  // The key's remembered state, if remembered.
  std::optional<Key> Find(absl::string_view consul_key) const ABSL_LOCKS_EXCLUDED(mu_);
  bool Contains(absl::string_view consul_key) const ABSL_LOCKS_EXCLUDED(mu_);
  // Remembers `key` (replacing what was remembered). Called with write_order() held exclusively.
  void Remember(absl::string_view consul_key, Key key) ABSL_LOCKS_EXCLUDED(mu_);
  // Records that a remembered key is bound to `session` now; nothing if it is not remembered.
  void MarkBound(absl::string_view consul_key, const std::string& session) ABSL_LOCKS_EXCLUDED(mu_);
  void Forget(absl::string_view consul_key) ABSL_LOCKS_EXCLUDED(mu_);
  // The remembered keys bound to `session`, in key order.
  std::vector<std::string> BoundTo(const std::string& session) const ABSL_LOCKS_EXCLUDED(mu_);
  // The remembered keys bound to any other session, with their state, in key order.
  std::vector<std::pair<std::string, Key>> Unbound(const std::string& session) const
      ABSL_LOCKS_EXCLUDED(mu_);
  void Clear() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Mutex write_order_;
  mutable absl::Mutex mu_;
  std::map<std::string, Key, std::less<>> keys_ ABSL_GUARDED_BY(mu_);  // by Consul key
};

}  // namespace registry

#endif  // REPOSITORY_REMEMBERED_KEYS_H_

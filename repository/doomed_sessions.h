// SPDX-License-Identifier: Apache-2.0
// repository/doomed_sessions.h
//
// The sessions an instance has counted lost while a server may still have them (the loss was
// decided by the clock, not by a server saying "unknown": hold_deadline.h), and the schedule of
// destroying them. A session that a partition or a slow election made us give up can outlive
// the loss on the servers by up to a TTL; until it ends, every lock it held stands still and
// every ephemeral key it held cannot be bound to the new session. Destroying it ends that at
// once (its locks then wait only for the lock-delay), so one failed attempt is not the end:
// attempts go on until a server confirms the destroy, or until the session has surely expired
// anyway (`give_up_after` past the loss).
//
// A pure schedule: no clock and no I/O. The owner passes the times and makes the calls.
//
// Thread safety: none; the owner guards it (SessionKeeper::mu_).
#ifndef REPOSITORY_DOOMED_SESSIONS_H_
#define REPOSITORY_DOOMED_SESSIONS_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace registry {

class DoomedSessions {
 public:
  // At most this many sessions are remembered; adding one more forgets the oldest (it has
  // expired on its own by the time eight later sessions were lost).
  static constexpr size_t kMaxRemembered = 8;

  explicit DoomedSessions(absl::Duration give_up_after) : give_up_after_(give_up_after) {}

  // `id` was counted lost at `lost_at` and may still exist: its first attempt is due at once.
  void Add(std::string id, absl::Time lost_at);

  // Forgets every session whose attempts are over at `now`; returns the first whose attempt is
  // due at `now`, if any. The session stays in the schedule until Destroyed() or Failed().
  std::optional<std::string> DueAt(absl::Time now);

  // When the next attempt is due (InfiniteFuture() when nothing is left to destroy).
  absl::Time NextAttempt() const;

  // A server confirmed that `id` no longer exists (destroyed now, or unknown already).
  void Destroyed(const std::string& id);
  // The attempt on `id` failed; the next one is due at `retry_at`.
  void Failed(const std::string& id, absl::Time retry_at);

  // Every session still to destroy, in the order they were lost; the schedule is left empty.
  std::vector<std::string> TakeAll();

  bool empty() const { return doomed_.empty(); }

 private:
  struct Doomed {
    std::string id;
    absl::Time next_attempt;
    absl::Time give_up_at;
  };

  const absl::Duration give_up_after_;
  std::vector<Doomed> doomed_;  // in the order they were lost
};

}  // namespace registry

#endif  // REPOSITORY_DOOMED_SESSIONS_H_

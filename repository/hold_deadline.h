// SPDX-License-Identifier: Apache-2.0
// repository/hold_deadline.h
//
// When a hold on the instance session must end. The arithmetic of the lock safety invariant
// (lock/README.md, "Safety"), written once, with no clock and no I/O so that it can be tested
// whole.
//
// What Consul guarantees, counted from S, the send time of the last session create or renewal
// that succeeded (the leader applied it at some moment after S):
//  - the leader expires a session no sooner than one TTL after the last renewal it applied (its
//    timer runs twice the TTL; the documented contract is "between TTL and 2 x TTL"), and a new
//    leader only ever restarts the timers; a renewal that a deposed leader still applied was
//    applied before any successor restarted them;
//  - when a session ends, every key it held stays locked for the lock-delay.
// So no other instance can hold a lock of this session before S + TTL + lock-delay, whatever
// any single server answers. The keeper ends every hold (reports the session lost) `margin`
// before that moment.
#ifndef REPOSITORY_HOLD_DEADLINE_H_
#define REPOSITORY_HOLD_DEADLINE_H_

#include <algorithm>

#include "absl/time/time.h"

namespace registry {

struct HoldDeadline {
  // The earliest moment, after S, at which another instance can hold a lock this session held.
  absl::Duration foreign_hold_after;
  // The time kept between the end of every hold and that moment: the lock-delay, but never less
  // than min(TTL / 4, 1 s), for lost listeners to run and a command under `registryctl lock`
  // to get its SIGTERM.
  absl::Duration margin;
  // When, after S, the keeper counts the session lost: foreign_hold_after - margin. It is the
  // TTL whenever the lock-delay is at least min(TTL / 4, 1 s), and never more.
  absl::Duration loss_after;
};

inline HoldDeadline HoldDeadlineFor(absl::Duration ttl, absl::Duration lock_delay) {
  HoldDeadline deadline;
  deadline.foreign_hold_after = ttl + lock_delay;
  deadline.margin = std::max(lock_delay, std::min(ttl / 4, absl::Seconds(1)));
  deadline.loss_after = deadline.foreign_hold_after - deadline.margin;
  return deadline;
}

}  // namespace registry

#endif  // REPOSITORY_HOLD_DEADLINE_H_

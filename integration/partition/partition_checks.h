// SPDX-License-Identifier: Apache-2.0
// integration/partition/partition_checks.h
//
// What a partition test concludes from its evidence, as pure functions:
//   - CheckExclusion: the sections of the lock (section_log.h) against overlaps and lost
//     increments of the counter, with the figures printed per fault (sections, overlaps, the
//     worst gap with no section running). The counter is replayed in start order as
//     section_log.h's CheckCounter does, with one difference: a section that reads a value an
//     earlier section sent, after the sections since had moved the counter on, met a late write.
//     critical_section.sh writes with a plain `registryctl put` (registryctl offers no fenced
//     write), and a write that a server received can be applied seconds later: a follower holds
//     a write until there is a leader, a request stuck in TCP across a partition is delivered when
//     it heals, and the client may already have sent it again elsewhere. Only a fenced write
//     (lock/README.md) refuses it. Late writes, and the increments they undid, are counted and
//     printed, not failures: no lock can prevent them. Any other impossible value is an error;
//     with no late write the final counter must be within the successful writes plus those of
//     unknown outcome;
//   - HolderHandover: for the holder cut off by a fault, how long before the next section
//     began its section had stopped (negative: they overlapped);
//   - UnexpectedFailures: every `registryctl lock` run that did not succeed although the fault
//     gave it no reason to fail.
//
// A run may fail (exit 1: lock not acquired in time, 2: error, 3: lock lost, 10/11: the
// section's get/put kept failing) only when it ran during the fault or within `grace` after the
// heal (calls begun then retry for up to a request timeout), and either on a node the fault cut
// off from the majority of the servers (then the heal counts from `cut_back`, when later: with
// client agents, a cut node reaches the servers through its own agent, which drops the servers
// serf called failed and gets them back only when serf sees them again), or anywhere when the fault
// (or the election its heal caused) left the majority without a leader for long enough to put
// sessions at risk: the session keeper counts a session lost one TTL after its last successful
// renewal whatever the servers answer, so an election slower than the time left costs sessions that
// Consul may have kept (lock/README.md, "Safety": a false loss, never an overlap). Anything else (a
// timeout of the harness itself, a crash, exit 3 elsewhere) is unexpected.
//
// Thread safety: plain values and pure functions.
#ifndef INTEGRATION_PARTITION_PARTITION_CHECKS_H_
#define INTEGRATION_PARTITION_PARTITION_CHECKS_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "integration/lock_safety/section_log.h"
#include "integration/partition/lock_workers.h"

namespace registry::partition {

// A fault as it happened.
struct FaultRecord {
  std::string name;
  absl::Time began{};
  absl::Time healed{};
  // Nodes cut off from the majority of the servers: their network cut, or (client agents) the
  // agent they talk to cut off, or down.
  std::set<int> cut{};
  // When every cut node could reach the servers again (with client agents: its agent back in
  // serf), if later than `healed`.
  absl::Time cut_back{};
  std::string holder_tag{};  // the section of a cut node running when it began, or ""
  // How long the majority of the servers had no leader (the fault took it away), or zero.
  absl::Duration leaderless{};
  // Set when `leaderless`, or the election after the heal, may have cost any instance its
  // session (see above).
  bool sessions_at_risk = false;
};

struct ExclusionFigures {
  int sections = 0;            // sections that started
  int overlaps = 0;            // pairs of sections that ran at once
  int forbidden_overlaps = 0;  // of them, those the earlier holder was not told of first
  double max_overlap_ms = 0;
  double worst_gap_ms = 0;  // longest time with no section running, after the first
  int64_t final_counter = 0;
  int writes = 0;                   // sections whose write succeeded
  int unknown_writes = 0;           // sections that sent a write without learning its outcome
  int late_writes = 0;              // values that came back after the counter had moved on
  int64_t undone_increments = 0;    // what those late writes took back
  std::vector<std::string> late;    // each late write, readable
  std::vector<std::string> errors;  // every violation, readable
  // With errors or late writes: each write whose outcome its section never learnt (the usual
  // suspects of a value that reappears: an unfenced write that landed late), readable.
  std::vector<std::string> unknown_outcomes;
};

// Checks `sections` (the counter started at 0 and is now `final_counter`).
ExclusionFigures CheckExclusion(const std::vector<integration::Section>& sections,
                                int64_t final_counter);

struct Handover {
  std::string holder;               // tag
  std::optional<std::string> next;  // the first section that started after the holder's start
  // next's start minus the holder's stop (its end, its "term", else its process's end).
  std::optional<absl::Duration> margin;
};
Handover HolderHandover(const std::vector<integration::Section>& sections,
                        const std::string& holder_tag);

// Whether the majority going `leaderless` for that long may have cost a live session: a session
// renewed every ttl / 2 has at least ttl / 2 left when the stretch begins, and its retries, one
// every `renew_retry` at most, land up to that long after a leader is back (the keeper's pace:
// repository/session_keeper.cc, RenewRetryDelayLocked). So the stretch is a risk from
// ttl / 2 - renew_retry on, not from ttl / 2.
bool LeaderlessPutsSessionsAtRisk(absl::Duration leaderless, absl::Duration ttl,
                                  absl::Duration renew_retry);

// One line per unexpected failure (see above), naming the run, its exit code and its stderr.
std::vector<std::string> UnexpectedFailures(const std::vector<Iteration>& runs,
                                            const FaultRecord& fault, absl::Duration grace);

}  // namespace registry::partition

#endif  // INTEGRATION_PARTITION_PARTITION_CHECKS_H_

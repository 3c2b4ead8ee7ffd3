// SPDX-License-Identifier: Apache-2.0
// watch/split_plan.h
//
// How a watch over a big tree is split into blocking queries ("probes"), so that a change
// re-reads the folder it happened in instead of the whole tree. Pure: no I/O, no threads.
//
// A Consul blocking query on a prefix wakes on any change below it and answers with everything
// below it. A split watch instead holds:
//  - tree probes: recursive blocking queries on disjoint string prefixes inside the tree, each
//    covering a group of folders (or leaves) of the split node; together they cover every key
//    listed when the plan was made;
//  - key probes: a single key (the watched key itself, present or not, or a leaf alone in its
//    group);
//  - guards: `?keys&separator=/` blocking queries on each folder from the watch's root down to
//    the split node. They answer with the names one level below (a few hundred bytes) and notice
//    a name no probe covers — a new folder, or a new leaf outside every group — which makes the
//    watch re-list and plan again. The server still walks every key below a guard's folder to
//    answer it, so each level of the chain costs the server a pass over the tree per change.
// Every key of the tree is thus read by exactly one probe, so events for one key keep their
// order; the watch engine diffs each probe's answer against its part of the listener's view.
//
// The split node is the first folder, going down from the root, with more than one name below
// it (metadata trees often start with chains of single folders: /metadata/<db>/schemas/...).
// Its names are grouped by string prefix: the largest group is split by its next character
// until the groups are small or the query budget is spent. Only that one level is split: a
// folder that alone holds more than the threshold stays one probe. A node whose names are mostly
// single keys (a flat prefix) is not split: its guard would answer with about as many names as
// the listing has keys.
//
// Thread safety: plain values and pure functions.
#ifndef WATCH_SPLIT_PLAN_H_
#define WATCH_SPLIT_PLAN_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "watch/diff.h"

namespace registry::watch {

// A key of a listing, with its ModifyIndex (the listing's order: ascending bytes).
struct ListedKey {
  absl::string_view key;
  uint64_t modify_index = 0;
};

struct Probe {
  enum class Kind {
    kTree,   // recursive listing of every key starting with `prefix`
    kKey,    // the single key `prefix`
    kGuard,  // the names one level below folder `prefix` (`?keys&separator=/`)
  };
  Kind kind = Kind::kTree;
  std::string prefix;
  // The highest ModifyIndex among the listed keys the probe reads: its first blocking query
  // waits for a change after it (a tombstone above it makes that query answer at once, which is
  // harmless).
  uint64_t start_index = 0;

  friend bool operator==(const Probe&, const Probe&) = default;
};

struct SplitPlan {
  // The watched key's probe (if it is not a pure prefix), the guards from the root down, then
  // the groups of the split node: key and tree probes in ascending order of prefix, disjoint.
  std::vector<Probe> probes;
  size_t first_group = 0;  // index of the first group in `probes`

  // True when `name`, a name a guard answered with, is read by some probe (or lies outside
  // `scope`, as "ns/ab" does for a watch on "ns/a"). False means the plan is out of date.
  bool Covers(const WatchScope& scope, absl::string_view name) const;
};

struct SplitLimits {
  size_t threshold = 1024;  // split only a listing of more keys (of the scope) than this
  int max_queries = 32;     // probes of one plan, guards included
};

// Plans the split of a watch on `scope` from a recursive listing of scope.consul_key() (keys in
// ascending order; keys outside the scope allowed). Returns nullopt when the watch should stay
// one query: the listing is within the threshold, the budget is below 3 or cannot hold the
// guards, the split node has more than half as many names as keys, it cannot be split into at
// least two groups, or the listing is not in ascending order (its runs of keys per folder, which
// the plan is made of, would not be contiguous).
std::optional<SplitPlan> PlanSplit(const WatchScope& scope, absl::Span<const ListedKey> listing,
                                   const SplitLimits& limits);

}  // namespace registry::watch

#endif  // WATCH_SPLIT_PLAN_H_

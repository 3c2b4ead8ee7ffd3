// SPDX-License-Identifier: Apache-2.0
// watch/query_machine_split.cc
//
// Split watches in the query machine (rules 8-10 of query_machine.h; the plan itself is
// split_plan.h). A split watch's own query idles; its probes run instead, each with its own
// index. Whatever goes wrong with a probe ends the split as a whole, and the watch falls back on
// what an unsplit watch does: a failure or an odd answer backs off and re-lists, a name outside
// the plan or an emptied part re-lists at once. A re-list of a big tree ends with a new plan,
// so the watch converges on a plan that matches the tree.
#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "consul/kv.h"
#include "consul/kv_listing_decoder.h"
#include "watch/query_machine.h"
#include "watch/query_machine_internal.h"

namespace registry::watch::machine {
namespace {

using Change = consul::IndexTracker::Change;

WatchScope ScopeOf(const Probe& probe) {
  return probe.kind == Probe::Kind::kKey ? WatchScope::Key(probe.prefix)
                                         : WatchScope::Prefix(probe.prefix);
}

ReadKind ReadOf(const Probe& probe) {
  switch (probe.kind) {
    case Probe::Kind::kKey:
      return ReadKind::kGet;
    case Probe::Kind::kGuard:
      return ReadKind::kNames;
    case Probe::Kind::kTree:
      break;
  }
  return ReadKind::kList;
}

// The keys and indexes of a listing's body (copies: the decoder's views live only per entry).
std::optional<std::vector<std::pair<std::string, uint64_t>>> ListedKeys(absl::string_view body) {
  std::vector<std::pair<std::string, uint64_t>> keys;
  const bool parsed =
      consul::ForEachListingEntry(body, [&keys](const consul::ListingEntryView& entry) {
        keys.emplace_back(std::string(entry.key), entry.modify_index);
        return true;
      });
  if (!parsed) return std::nullopt;
  return keys;
}

// The entries of `snapshot` (sorted by key) inside `scope`: a contiguous run.
std::pair<Snapshot::iterator, Snapshot::iterator> RangeOf(Snapshot& snapshot,
                                                          const WatchScope& scope) {
  auto first = std::lower_bound(
      snapshot.begin(), snapshot.end(), scope.consul_key(),
      [](const KnownEntry& entry, const std::string& key) { return entry.consul_key < key; });
  auto last = std::find_if(first, snapshot.end(), [&scope](const KnownEntry& entry) {
    return !scope.Contains(entry.consul_key);
  });
  return {first, last};
}

// Whether the plan still holds after a guard's answer: false when a name no probe covers
// appeared or the folder is gone.
absl::StatusOr<bool> GuardHolds(const WatchState& state, const Answered& answer) {
  absl::StatusOr<consul::KvKeysResult> names =
      consul::ParseKvKeysResponse(*answer.request, *answer.response);
  if (!names.ok()) return names.status();
  if (names->keys.empty()) return false;  // the folder is gone: the plan is out of date
  const SplitPlan& plan = std::get<TreeWatch>(state.role).split->plan;
  for (const std::string& name : names->keys) {
    if (!plan.Covers(state.scope, name)) return false;
  }
  return true;
}

// Diffs a tree or key probe's answer against its part of the watch's view (by `compare`) and
// delivers the events; false when the part is empty now (the plan no longer holds).
absl::StatusOr<bool> DeliverPart(const QueryRules& rules, WatchState* state, QueryIndex index,
                                 const Answered& answer, CompareBy compare, Actions* out) {
  TreeWatch& tree = std::get<TreeWatch>(state->role);
  const ProbeState& probe = tree.split->probes[static_cast<size_t>(index)];
  auto [first, last] = RangeOf(tree.snapshot, probe.scope);
  Snapshot part(std::make_move_iterator(first), std::make_move_iterator(last));
  absl::StatusOr<DiffResult> diff =
      DiffAnswer(rules, &part, probe.scope, *answer.request, *answer.response, compare);
  if (!diff.ok()) {
    std::move(part.begin(), part.end(), first);  // untouched by a failed diff: put it back
    return diff.status();
  }
  // (`part` itself may have been consumed by the diff.)
  if (diff->next.size() == static_cast<size_t>(last - first)) {  // no shift of the rest needed
    std::move(diff->next.begin(), diff->next.end(), first);
  } else {
    auto at = tree.snapshot.erase(first, last);
    tree.snapshot.insert(at, std::make_move_iterator(diff->next.begin()),
                         std::make_move_iterator(diff->next.end()));
  }
  if (!diff->events.empty()) out->push_back(Deliver{std::move(diff->events)});
  // An emptied group would wake on every write to the store (Consul's index of an empty prefix
  // is the whole table's): plan again instead. A missing key is normal for the watched key; on
  // Consul before 1.9 its probe then wakes on every write too (one small answer each).
  return consul::KvReadFound(*answer.response) || probe.probe.kind == Probe::Kind::kKey;
}

// Ends the split and re-lists the whole watch at once, for a new plan (rule 9).
void Replan(WatchState* state, absl::Time now, Actions* out) {
  Unsplit(state, out);
  if (state->next == NextRead::kBlocking) state->next = NextRead::kReplan;
  SendOwn(state, now, out);
}

}  // namespace

bool WorthPlanning(const QueryRules& rules, size_t keys, size_t declined_at) {
  return keys > rules.split.threshold && rules.split.max_queries > 1 &&
         keys > declined_at + declined_at / 4;
}

void SendOrSplit(const QueryRules& rules, WatchState* state, const consul::HttpResponse& answer,
                 absl::Time now, Actions* out) {
  TreeWatch& tree = std::get<TreeWatch>(state->role);
  tree.split.reset();
  const size_t size = tree.snapshot.size();
  if (consul::KvReadFound(answer) && WorthPlanning(rules, size, tree.declined_at)) {
    std::optional<SplitPlan> plan;
    if (auto keys = ListedKeys(answer.body)) {
      std::vector<ListedKey> views;
      views.reserve(keys->size());
      for (const auto& [key, index] : *keys) views.push_back(ListedKey{key, index});
      plan = PlanSplit(state->scope, views, rules.split);
    }
    tree.declined_at = plan.has_value() ? 0 : size;
    if (plan.has_value()) tree.split = SplitState{std::move(*plan), {}};
  }
  if (tree.split.has_value()) return StartProbes(state, now, out);
  SendOwn(state, now, out);
}

void StartProbes(WatchState* state, absl::Time now, Actions* out) {
  TreeWatch& tree = std::get<TreeWatch>(state->role);
  if (!tree.split.has_value()) return;
  SplitState& split = *tree.split;
  out->push_back(
      Note{LogLevel::kDebug,
           absl::StrCat("'", state->scope.consul_key(), "': ", tree.snapshot.size(),
                        " keys, split into ", split.plan.probes.size(), " blocking queries")});
  split.probes.clear();
  for (const Probe& planned : split.plan.probes) {
    ProbeState probe{planned, ScopeOf(planned), QueryState{}};
    if (planned.start_index != 0) probe.query.tracker.Observe(planned.start_index);
    split.probes.push_back(std::move(probe));
  }
  state->own.phase = QueryState::Phase::kIdle;
  out->push_back(OpenProbes{split.probes.size()});
  for (size_t i = 0; i < split.probes.size(); ++i) {
    SendProbe(state, static_cast<QueryIndex>(i), now, out);
  }
}

void Unsplit(WatchState* state, Actions* out) {
  TreeWatch* tree = std::get_if<TreeWatch>(&state->role);
  if (tree == nullptr || !tree->split.has_value()) return;
  if (!tree->split->probes.empty()) out->push_back(CloseProbes{});
  tree->split.reset();
}

void SendProbe(WatchState* state, QueryIndex index, absl::Time now, Actions* out) {
  ProbeState& probe = std::get<TreeWatch>(state->role).split->probes[static_cast<size_t>(index)];
  QueryState& query = probe.query;
  query.phase = QueryState::Phase::kSent;
  query.sent_index = query.tracker.next_index();
  query.sent_at = now;
  query.wait_until = absl::InfiniteFuture();
  out->push_back(Send{index, ReadOf(probe.probe), probe.scope.consul_key(), query.sent_index});
}

void ApplyProbe(const QueryRules& rules, WatchState* state, QueryIndex index,
                const Answered& answer, Actions* out) {
  SplitState& split = *std::get<TreeWatch>(state->role).split;
  QueryState& query = split.probes[static_cast<size_t>(index)].query;
  const bool guard = split.probes[static_cast<size_t>(index)].probe.kind == Probe::Kind::kGuard;
  const absl::Time now = answer.now;
  query.phase = QueryState::Phase::kIdle;
  query.fresh_index = query.sent_index == 0;
  const Change change = query.tracker.Observe(answer.meta->index);
  const bool early = Early(rules, query, now);
  if (change == Change::kReset || (change == Change::kUnchanged && early)) {
    return BackOff(rules, state, now, /*suspicious=*/true, out);  // as an unsplit watch would
  }
  // An answer after the whole wait with the same index is compared by content (rule 3).
  const CompareBy compare =
      change == Change::kChanged ? CompareBy::kModifyIndex : CompareBy::kContent;
  absl::StatusOr<bool> plan_holds =
      guard ? GuardHolds(*state, answer) : DeliverPart(rules, state, index, answer, compare, out);
  if (!plan_holds.ok()) return Fail(rules, state, plan_holds.status(), now, out);
  if (!*plan_holds) return Replan(state, now, out);
  // A proper blocking answer ends the watch's run of back-offs, as it does for an unsplit watch.
  if (query.sent_index != 0) state->backoffs = 0;
  if (change == Change::kChanged && guard && rules.split_guard_pause > absl::ZeroDuration()) {
    // Each guard answer costs the server a walk of the folder; asked again after the pause, with
    // this index, it answers at once if anything changed meanwhile. Meanwhile another query may
    // take its idle connection, so it may open a new one: its index is a pause old, and a server
    // restart in between breaks its sibling probes' connections, which ends the split.
    query.fresh_index = true;
    query.phase = QueryState::Phase::kWaiting;
    query.wait_until = now + rules.split_guard_pause;
    out->push_back(Wait{index, query.wait_until});
    return;
  }
  SendProbe(state, index, now, out);
}

}  // namespace registry::watch::machine

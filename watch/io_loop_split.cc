// watch/io_loop_split.cc
//
// Split watches, on the IO thread (the plan itself is watch/split_plan.h). A split watch's own
// query is idle; its probes run instead, each one transfer of its own. Whatever goes wrong with
// a probe ends the split as a whole, and the watch falls back on what an unsplit watch does:
// a failure or an odd answer backs off and re-lists, a name outside the plan or an emptied part
// re-lists at once. A re-list of a big tree ends with a new plan, so the watch converges on a
// plan that matches the tree.
#include <algorithm>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "base/log.h"
#include "consul/kv.h"
#include "watch/io_loop.h"
#include "watch/listing_parser.h"

namespace registry::watch::internal {
namespace {

WatchScope ScopeOf(const Probe& probe) {
  return probe.kind == Probe::Kind::kKey ? WatchScope::Key(probe.prefix)
                                         : WatchScope::Prefix(probe.prefix);
}

// The keys and indexes of a listing's body (copies: the parser's views live only per entry).
std::optional<std::vector<std::pair<std::string, uint64_t>>> ListedKeys(absl::string_view body) {
  std::vector<std::pair<std::string, uint64_t>> keys;
  const bool parsed = ForEachListingEntry(body, [&keys](const ListingEntryView& entry) {
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

}  // namespace

void IoLoop::StartOrSplit(Query* watch, const consul::HttpResponse& listing, absl::Time now) {
  watch->plan.reset();
  const size_t size = watch->snapshot.size();
  const bool worth_planning = listing.status == 200 && WorthPlanning(size, watch->declined_at);
  if (worth_planning) {
    if (auto keys = ListedKeys(listing.body)) {
      std::vector<ListedKey> views;
      views.reserve(keys->size());
      for (const auto& [key, index] : *keys) views.push_back(ListedKey{key, index});
      watch->plan = PlanSplit(watch->scope, views, split_limits());
    }
    watch->declined_at = watch->plan.has_value() ? 0 : size;
  }
  if (watch->plan.has_value()) {
    StartProbes(watch, now);
  } else {
    StartQuery(watch, now);
  }
}

bool IoLoop::WorthPlanning(size_t keys, size_t declined_at) const {
  return keys > options_.split_threshold && options_.max_queries_per_watch > 1 &&
         keys > declined_at + declined_at / 4;
}

void IoLoop::StartProbes(Query* watch, absl::Time now) {
  if (!watch->plan.has_value()) return;
  Log(LogLevel::kDebug, "watch", "'", watch->scope.consul_key(), "': ", watch->snapshot.size(),
      " keys, split into ", watch->plan->probes.size(), " blocking queries");
  for (const Probe& planned : watch->plan->probes) {
    auto probe = std::make_unique<Query>(this, ScopeOf(planned));
    probe->id = watch->id;
    probe->watch = watch;
    probe->probe = planned;
    probe->easy = curl_easy_init();
    if (probe->easy == nullptr) {  // no split then; the whole watch still works
      Unsplit(watch);
      StartQuery(watch, now);
      return;
    }
    if (planned.start_index != 0) probe->tracker.Observe(planned.start_index);
    watch->probes.push_back(std::move(probe));
  }
  // Started once all exist: a failure to start one ends the split (Fail -> BackOff -> Unsplit).
  for (size_t i = 0; i < watch->probes.size(); ++i) {
    const size_t before = watch->probes.size();
    StartQuery(watch->probes[i].get(), now);
    if (watch->probes.size() != before) return;
  }
}

void IoLoop::Unsplit(Query* watch) {
  for (std::unique_ptr<Query>& probe : watch->probes) {
    Drop(probe.get());
    retired_.push_back(std::move(probe));
  }
  watch->probes.clear();
  watch->plan.reset();
}

void IoLoop::Replan(Query* watch, absl::Time now) {
  Unsplit(watch);
  watch->replan = true;
  StartQuery(watch, now);
}

void IoLoop::ApplyProbe(Query* probe, const consul::HttpRequest& request,
                        const consul::HttpResponse& response, uint64_t index, absl::Time now) {
  Query* watch = probe->watch;
  probe->trust_new_connection = probe->sent_index == 0;
  const consul::IndexTracker::Change change = probe->tracker.Observe(index);
  const bool early = probe->sent_index != 0 && now - probe->sent_at < options_.block_query_wait / 2;
  if (change == consul::IndexTracker::Change::kReset ||
      (change == consul::IndexTracker::Change::kUnchanged && early)) {
    BackOff(watch, now, /*suspicious=*/true);  // as an unsplit watch would
    return;
  }
  // An answer after the whole wait with the same index is compared by content (as in Apply).
  const CompareBy compare = change == consul::IndexTracker::Change::kChanged
                                ? CompareBy::kModifyIndex
                                : CompareBy::kContent;
  absl::StatusOr<bool> plan_holds = probe->probe->kind == Probe::Kind::kGuard
                                        ? GuardHolds(probe, request, response)
                                        : DeliverPart(probe, request, response, compare);
  if (!plan_holds.ok()) {
    Fail(watch, plan_holds.status(), request.server, now);
    return;
  }
  if (!*plan_holds) {
    Replan(watch, now);
    return;
  }
  // A proper blocking answer ends the watch's run of back-offs, as it does for an unsplit watch.
  if (probe->sent_index != 0) watch->backoff_steps = 0;
  if (change == consul::IndexTracker::Change::kChanged &&
      probe->probe->kind == Probe::Kind::kGuard &&
      options_.split_guard_pause > absl::ZeroDuration()) {
    // Each guard answer costs the server a walk of the folder; asked again after the pause, with
    // this index, it answers at once if anything changed meanwhile. Meanwhile another query may
    // take its idle connection, so it may open a new one: its index is a pause old, and a server
    // restart in between breaks its sibling probes' connections, which ends the split.
    probe->trust_new_connection = true;
    probe->retry_at = now + options_.split_guard_pause;
    timers_.emplace(probe->retry_at, probe->id);
    return;
  }
  StartQuery(probe, now);
}

IoLoop::Query* IoLoop::DueAt(Query* watch, absl::Time at) {
  if (watch->exchange == nullptr && watch->retry_at == at) return watch;
  for (std::unique_ptr<Query>& probe : watch->probes) {
    if (probe->exchange == nullptr && probe->retry_at == at) return probe.get();
  }
  return nullptr;
}

absl::StatusOr<bool> IoLoop::GuardHolds(Query* guard, const consul::HttpRequest& request,
                                        const consul::HttpResponse& response) {
  absl::StatusOr<consul::KvKeysResult> names = consul::ParseKvKeysResponse(request, response);
  if (!names.ok()) return names.status();
  if (names->keys.empty()) return false;  // the folder is gone: the plan is out of date
  const SplitPlan& plan = *guard->watch->plan;
  for (const std::string& name : names->keys) {
    if (!plan.Covers(guard->watch->scope, name)) return false;
  }
  return true;
}

absl::StatusOr<bool> IoLoop::DeliverPart(Query* probe, const consul::HttpRequest& request,
                                         const consul::HttpResponse& response, CompareBy compare) {
  Query* watch = probe->watch;
  auto [first, last] = RangeOf(watch->snapshot, probe->scope);
  Snapshot part(std::make_move_iterator(first), std::make_move_iterator(last));
  absl::StatusOr<DiffResult> diff = Diff(&part, probe->scope, request, response, compare);
  if (!diff.ok()) {
    std::move(part.begin(), part.end(), first);  // untouched by a failed diff: put it back
    return diff.status();
  }
  // (`part` itself may have been consumed by the diff.)
  if (diff->next.size() == static_cast<size_t>(last - first)) {  // no shift of the rest needed
    std::move(diff->next.begin(), diff->next.end(), first);
  } else {
    auto at = watch->snapshot.erase(first, last);
    watch->snapshot.insert(at, std::make_move_iterator(diff->next.begin()),
                           std::make_move_iterator(diff->next.end()));
  }
  dispatcher_->Enqueue(watch->id, std::move(diff->events));
  // An emptied group would wake on every write to the store (Consul's index of an empty prefix
  // is the whole table's): plan again instead. A missing key is normal for the watched key; on
  // Consul before 1.9 its probe then wakes on every write too (one small answer each).
  return response.status == 200 || probe->probe->kind == Probe::Kind::kKey;
}

}  // namespace registry::watch::internal

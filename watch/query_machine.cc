// SPDX-License-Identifier: Apache-2.0
// watch/query_machine.cc
//
// The query machine's inputs, and what an answer of a watch's own query does (rules 1-7 of
// query_machine.h). Split watches are in query_machine_split.cc.
#include "watch/query_machine.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "consul/errors.h"
#include "consul/kv_listing_decoder.h"
#include "watch/query_machine_internal.h"

namespace registry::watch {
namespace machine {
namespace {

using Change = consul::IndexTracker::Change;

// Hands an answer of the own query to the listener (a tree watch's diff, by `compare`) or the
// observer (a key watch's state, when the entry differs from the last one reported).
absl::Status DeliverOwn(const QueryRules& rules, WatchState* state, const Answered& answer,
                        CompareBy compare, Actions* out) {
  if (KeyWatch* key = std::get_if<KeyWatch>(&state->role)) {
    absl::StatusOr<consul::KvGetResult> read =
        consul::ParseKvGetResponse(*answer.request, *answer.response);
    if (!read.ok()) return read.status();
    // Whole-entry equality: after an index reset an unchanged key may be reported once more.
    if (key->reported.has_value() && *key->reported == read->entry) return absl::OkStatus();
    key->reported = read->entry;
    out->push_back(ReportKey{std::move(read->entry)});
    return absl::OkStatus();
  }
  TreeWatch& tree = std::get<TreeWatch>(state->role);
  absl::StatusOr<DiffResult> diff =
      DiffAnswer(rules, &tree.snapshot, state->scope, *answer.request, *answer.response, compare);
  if (!diff.ok()) return diff.status();
  tree.snapshot = std::move(diff->next);
  if (!diff->events.empty()) out->push_back(Deliver{std::move(diff->events)});
  return absl::OkStatus();
}

// A usable answer of the own query (rules 2-6).
void ApplyOwn(const QueryRules& rules, WatchState* state, const Answered& answer, Actions* out) {
  QueryState& own = state->own;
  const absl::Time now = answer.now;
  const bool relist = state->next == NextRead::kRelist;
  const bool replan = state->next == NextRead::kReplan;
  if (replan) state->next = NextRead::kBlocking;
  own.phase = QueryState::Phase::kIdle;
  own.fresh_index = own.sent_index == 0;
  Change change = relist ? Change::kReset : own.tracker.Observe(answer.meta->index);
  // A re-list for a new plan: the index history holds, and the plan must be made whatever came.
  if (replan && change == Change::kUnchanged) change = Change::kChanged;
  const bool early = Early(rules, own, now);
  const bool unchanged = change == Change::kUnchanged;
  if (unchanged && early) return BackOff(rules, state, now, /*suspicious=*/true, out);
  const bool reset = change == Change::kReset;
  if (reset && !relist) {
    // Rule 4: a server restarted on its data answers from the state it is still rebuilding, older
    // than what the watch reported. The re-list that follows is consistent (index 0): the server
    // answers it only once it is ready, or from a state that really went back (a restore).
    own.tracker.Reset();
    state->next = NextRead::kRelist;
    if (early) return BackOff(rules, state, now, /*suspicious=*/true, out);
    return SendOwn(state, now, out);
  }
  absl::Status delivered =
      DeliverOwn(rules, state, answer,
                 reset || unchanged ? CompareBy::kContent : CompareBy::kModifyIndex, out);
  if (!delivered.ok()) return Fail(rules, state, delivered, now, out);
  if (unchanged) {  // after the whole wait: compared by content above, once per wait
    state->backoffs = 0;
    return SendOwn(state, now, out);
  }
  if (reset) {  // a re-list
    if (!IsKeyWatch(*state)) out->push_back(CountRelist{});
    own.tracker.Reset();
    own.tracker.Observe(answer.meta->index);
  }
  state->next = NextRead::kBlocking;
  if (state->failures > 0) {
    out->push_back(
        Note{LogLevel::kInfo, absl::StrCat("'", state->scope.consul_key(), "': recovered after ",
                                           state->failures, " failed attempt(s)")});
    state->failures = 0;
  }
  if (own.sent_index != 0 || !state->backoff_suspicious) state->backoffs = 0;
  if (IsKeyWatch(*state)) return SendOwn(state, now, out);
  if (relist || replan) std::get<TreeWatch>(state->role).declined_at = 0;
  SendOrSplit(rules, state, *answer.response, now, out);
}

void OnStarted(WatchState* state, absl::Time now, Actions* out) {
  const KeyWatch* key = std::get_if<KeyWatch>(&state->role);
  if (key != nullptr && key->start_at > now) {
    state->own.phase = QueryState::Phase::kWaiting;
    state->own.wait_until = key->start_at;
    out->push_back(Wait{kOwnQuery, key->start_at});
    return;
  }
  const TreeWatch* tree = std::get_if<TreeWatch>(&state->role);
  if (tree != nullptr && tree->split.has_value()) return StartProbes(state, now, out);
  SendOwn(state, now, out);
}

bool IsProbe(const WatchState& state, QueryIndex query) {
  const TreeWatch* tree = std::get_if<TreeWatch>(&state.role);
  return query >= 0 && tree != nullptr && tree->split.has_value() &&
         static_cast<size_t>(query) < tree->split->probes.size();
}

void OnAnswered(const QueryRules& rules, WatchState* state, const Answered& answer, Actions* out) {
  if (answer.query != kOwnQuery && !IsProbe(*state, answer.query)) return;  // an ended split's
  if (!answer.meta.ok()) return Fail(rules, state, answer.meta.status(), answer.now, out);
  if (answer.query == kOwnQuery) return ApplyOwn(rules, state, answer, out);
  ApplyProbe(rules, state, answer.query, answer, out);
}

// The query whose wait ends at `at` starts; a timer no query waits for is stale.
void OnTimerFired(WatchState* state, const TimerFired& timer, Actions* out) {
  auto due = [&timer](const QueryState& query) {
    return query.phase == QueryState::Phase::kWaiting && query.wait_until == timer.at;
  };
  if (due(state->own)) return SendOwn(state, timer.now, out);
  TreeWatch* tree = std::get_if<TreeWatch>(&state->role);
  if (tree == nullptr || !tree->split.has_value()) return;
  for (size_t i = 0; i < tree->split->probes.size(); ++i) {
    if (due(tree->split->probes[i].query)) {
      return SendProbe(state, static_cast<QueryIndex>(i), timer.now, out);
    }
  }
}

}  // namespace

bool Early(const QueryRules& rules, const QueryState& query, absl::Time now) {
  return query.sent_index != 0 && now - query.sent_at < rules.block_query_wait / 2;
}

void SendOwn(WatchState* state, absl::Time now, Actions* out) {
  QueryState& own = state->own;
  const uint64_t index = state->next == NextRead::kBlocking ? own.tracker.next_index() : 0;
  own.phase = QueryState::Phase::kSent;
  own.sent_index = index;
  own.sent_at = now;
  own.wait_until = absl::InfiniteFuture();
  out->push_back(Send{kOwnQuery, IsKeyWatch(*state) ? ReadKind::kGet : ReadKind::kList,
                      state->scope.consul_key(), index});
}

void Fail(const QueryRules& rules, WatchState* state, const absl::Status& status, absl::Time now,
          Actions* out) {
  state->next = NextRead::kRelist;  // whatever was missed, the next answer is a full re-list
  if (consul::IsTransient(status)) out->push_back(AvoidServer{});
  if (state->failures++ == 0) {
    out->push_back(
        Note{LogLevel::kWarn, absl::StrCat("'", state->scope.consul_key(), "': ", status.message(),
                                           "; re-listing with back-off")});
  }
  BackOff(rules, state, now, /*suspicious=*/false, out);
}

void BackOff(const QueryRules& rules, WatchState* state, absl::Time now, bool suspicious,
             Actions* out) {
  Unsplit(state, out);
  state->backoff_suspicious = suspicious;
  // The query after a back-off is a plain re-list: whatever happened meanwhile (even an index
  // reset that no parked query saw) is diffed by content at once.
  state->next = NextRead::kRelist;
  QueryState& own = state->own;
  own.phase = QueryState::Phase::kWaiting;
  own.wait_until = now + rules.backoff_delay(++state->backoffs);
  out->push_back(Wait{kOwnQuery, own.wait_until});
}

absl::StatusOr<DiffResult> DiffAnswer(const QueryRules& rules, Snapshot* previous,
                                      const WatchScope& scope, const consul::HttpRequest& request,
                                      const consul::HttpResponse& response, CompareBy compare) {
  if (consul::KvReadFound(response)) {
    std::optional<DiffResult> diff =
        DiffListingBody(previous, response.body, scope, rules.key_mapper, compare);
    if (diff.has_value()) return std::move(*diff);
  }
  // Nothing there (an empty subtree), or a body the in-place differ does not take.
  absl::StatusOr<consul::KvListResult> listing = consul::ParseKvListResponse(request, response);
  if (!listing.ok()) return listing.status();
  return DiffListing(std::move(*previous), std::move(listing->entries), scope, rules.key_mapper,
                     compare);
}

}  // namespace machine

WatchState NewTreeWatch(const QueryRules& rules, WatchScope scope, consul::KvListResult listing,
                        std::vector<DataChangedEvent>* replay) {
  WatchState state(std::move(scope));
  TreeWatch tree;
  const bool worth_planning =
      machine::WorthPlanning(rules, listing.entries.size(), /*declined_at=*/0);
  std::optional<SplitPlan> plan;
  if (worth_planning) {
    std::vector<ListedKey> keys;
    keys.reserve(listing.entries.size());
    for (const consul::DirEntry& entry : listing.entries) {
      keys.push_back(ListedKey{entry.key, entry.modify_index});
    }
    plan = PlanSplit(state.scope, keys, rules.split);
  }
  DiffResult initial = DiffListing({}, std::move(listing.entries), state.scope, rules.key_mapper,
                                   CompareBy::kModifyIndex);
  if (plan.has_value()) {
    tree.split = SplitState{std::move(*plan), {}};
  } else if (worth_planning) {
    tree.declined_at = initial.next.size();
  }
  tree.snapshot = std::move(initial.next);
  state.own.tracker.Observe(listing.meta.index);
  state.role = std::move(tree);
  *replay = std::move(initial.events);
  return state;
}

WatchState NewKeyWatch(WatchScope scope, absl::Time start_at) {
  WatchState state(std::move(scope));
  state.role = KeyWatch{start_at, std::nullopt};
  return state;
}

std::vector<QueryAction> Transition(const QueryRules& rules, WatchState* state,
                                    const QueryInput& input) {
  machine::Actions out;
  if (const auto* started = std::get_if<Started>(&input)) {
    machine::OnStarted(state, started->now, &out);
  } else if (const auto* answered = std::get_if<Answered>(&input)) {
    machine::OnAnswered(rules, state, *answered, &out);
  } else if (const auto* refused = std::get_if<ConnectionRefused>(&input)) {
    // Not a failure (rule 7): re-list at once, on a new connection.
    machine::Unsplit(state, &out);
    state->next = NextRead::kRelist;
    machine::SendOwn(state, refused->now, &out);
  } else if (const auto* not_sent = std::get_if<NotSent>(&input)) {
    machine::Fail(rules, state, not_sent->status, not_sent->now, &out);
  } else if (const auto* timer = std::get_if<TimerFired>(&input)) {
    machine::OnTimerFired(state, *timer, &out);
  } else if (const auto* no_probes = std::get_if<ProbesRefused>(&input)) {
    machine::Unsplit(state, &out);  // no split then; the whole watch still works
    machine::SendOwn(state, no_probes->now, &out);
  }
  return out;
}

const QueryState& QueryOf(const WatchState& state, QueryIndex query) {
  if (query == kOwnQuery) return state.own;
  return std::get<TreeWatch>(state.role).split->probes[static_cast<size_t>(query)].query;
}

bool MayOpenConnection(const WatchState& state, QueryIndex query) {
  const QueryState& asked = QueryOf(state, query);
  return asked.sent_index == 0 || asked.fresh_index;
}

bool IsKeyWatch(const WatchState& state) { return std::holds_alternative<KeyWatch>(state.role); }

}  // namespace registry::watch

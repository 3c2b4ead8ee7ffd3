// SPDX-License-Identifier: Apache-2.0
// watch/query_machine_internal.h
//
// Internal to the query machine (query_machine.h): the steps query_machine.cc (answers of a
// watch's own query, failures, back-offs) and query_machine_split.cc (split watches) share.
//
// Thread safety: pure functions.
#ifndef WATCH_QUERY_MACHINE_INTERNAL_H_
#define WATCH_QUERY_MACHINE_INTERNAL_H_

#include <cstddef>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "consul/http_types.h"
#include "watch/diff.h"
#include "watch/query_machine.h"

namespace registry::watch::machine {

using Actions = std::vector<QueryAction>;

// Whether an answer sent `query` came before half the wait (rules 2 and 4). A plain read
// (index 0) answers at once by design: never early.
bool Early(const QueryRules& rules, const QueryState& query, absl::Time now);

// Starts the own query: Send with the index NextRead asks for.
void SendOwn(WatchState* state, absl::Time now, Actions* out);
// Rule 1: backs off, then re-lists; avoids the server when the failure is transient.
void Fail(const QueryRules& rules, WatchState* state, const absl::Status& status, absl::Time now,
          Actions* out);
// Ends any split and waits for the next back-off; the own query then re-lists (kRelist).
// `suspicious`: after an odd answer rather than a failure (rule 6).
void BackOff(const QueryRules& rules, WatchState* state, absl::Time now, bool suspicious,
             Actions* out);
// Diffs a listing answer against `*previous` as diff.h does (the in-place differ when the
// answer found entries, else the general parser); `*previous` is consumed on success only.
absl::StatusOr<DiffResult> DiffAnswer(const QueryRules& rules, Snapshot* previous,
                                      const WatchScope& scope, const consul::HttpRequest& request,
                                      const consul::HttpResponse& response, CompareBy compare);

// query_machine_split.cc.

// Whether a listing of `keys` keys is worth a PlanSplit for a watch last declined at
// `declined_at` keys (rule 8): it is big, the budget allows a split, and it grew by a quarter
// since it was declined (each plan parses the listing again).
bool WorthPlanning(const QueryRules& rules, size_t keys, size_t declined_at);
// After a tree watch's answer to its own query: splits it if worth it, else sends it again.
void SendOrSplit(const QueryRules& rules, WatchState* state, const consul::HttpResponse& answer,
                 absl::Time now, Actions* out);
// Starts one probe per entry of the pending plan; the own query idles.
void StartProbes(WatchState* state, absl::Time now, Actions* out);
// Ends the split, if any (CloseProbes when probes ran).
void Unsplit(WatchState* state, Actions* out);
// A usable answer of probe `probe` (rules 9 and 10).
void ApplyProbe(const QueryRules& rules, WatchState* state, QueryIndex probe,
                const Answered& answer, Actions* out);
void SendProbe(WatchState* state, QueryIndex probe, absl::Time now, Actions* out);

}  // namespace registry::watch::machine

#endif  // WATCH_QUERY_MACHINE_INTERNAL_H_

// watch/io_loop_answers.cc
//
// What an answer (or a failure) does to a watch's query, on the IO thread: the listing is
// diffed against what the listener was told, the events are queued, and the next query starts
// at once or after a back-off. The rest of the loop is in io_loop.cc.
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/backoff.h"
#include "base/log.h"
#include "base/plugin_metrics.h"
#include "consul/exchange_metrics.h"
#include "consul/kv.h"
#include "consul/query.h"
#include "watch/io_loop.h"

namespace registry::watch::internal {
namespace {

// Failures that say "this server is not answering properly": the next query tries another one.
bool IsServerFailure(const absl::Status& status) {
  return absl::IsUnavailable(status) || absl::IsInternal(status) || absl::IsDataLoss(status) ||
         absl::IsDeadlineExceeded(status);
}

// The query metadata of an answer a watch can use (200, or 404 for an empty subtree); the
// failure otherwise.
absl::StatusOr<consul::QueryMeta> UsableAnswer(
    const consul::HttpRequest& request, const absl::StatusOr<consul::HttpResponse>& response) {
  if (!response.ok()) return response.status();
  if (response->status != 200 && response->status != 404) {
    absl::StatusOr<consul::KvListResult> error = consul::ParseKvListResponse(request, *response);
    return error.ok() ? absl::InternalError(absl::StrCat("HTTP ", response->status))
                      : error.status();
  }
  return consul::ParseQueryMeta(request, *response);
}

}  // namespace

void IoLoop::Complete(Query* query, CURLcode result, absl::Time now) {
  curl_multi_remove_handle(multi_, query->easy);
  std::unique_ptr<consul::CurlExchange> exchange = std::move(query->exchange);
  const consul::HttpRequest& request = exchange->request();
  absl::StatusOr<consul::HttpResponse> response = exchange->Finish(result);
  if (query->refused_new_connection) {  // not a failure: re-list at once on a new connection
    Query* watch = WatchOf(query);
    Unsplit(watch);
    watch->resync = true;
    StartQuery(watch, now);
    return;
  }
  consul::RecordExchange(request, response, now - query->sent_at);
  absl::StatusOr<consul::QueryMeta> meta = UsableAnswer(request, response);
  client_->ReportOutcome(meta.status());  // the repository's connection state hears watches too
  if (!meta.ok()) {
    Fail(WatchOf(query), meta.status(), request.server, now);
    return;
  }
  if (query->watch != nullptr) {
    ApplyProbe(query, request, *response, meta->index, now);
  } else {
    Apply(query, request, *response, meta->index, now);
  }
}

void IoLoop::Apply(Query* query, const consul::HttpRequest& request,
                   const consul::HttpResponse& response, uint64_t index, absl::Time now) {
  const bool resync = query->resync;
  const bool replan = std::exchange(query->replan, false);
  query->trust_new_connection = query->sent_index == 0;
  consul::IndexTracker::Change change =
      resync ? consul::IndexTracker::Change::kReset : query->tracker.Observe(index);
  // A re-list for a new plan: the index history holds, and the plan must be made whatever came.
  if (replan && change == consul::IndexTracker::Change::kUnchanged) {
    change = consul::IndexTracker::Change::kChanged;
  }
  // An early answer that is no change (or an index reset) is suspicious: back off rather than
  // spin. A plain read (index 0) answers at once by design.
  const bool early = query->sent_index != 0 && now - query->sent_at < options_.block_query_wait / 2;
  const bool unchanged = change == consul::IndexTracker::Change::kUnchanged;
  if (unchanged && early) {
    BackOff(query, now, /*suspicious=*/true);
    return;
  }
  // An unchanged index after the whole wait is compared by content too (once per wait), so that
  // a watch converges even when an index lies: a reset that landed on this very index while no
  // query of the watch was parked changes content and not the index.
  const bool reset = change == consul::IndexTracker::Change::kReset;
  absl::Status delivered =
      query->observer != nullptr
          ? DeliverKeyState(query, request, response)
          : DeliverDiff(query, request, response,
                        reset || unchanged ? CompareBy::kContent : CompareBy::kModifyIndex);
  if (!delivered.ok()) {
    Fail(query, delivered, request.server, now);
    return;
  }
  if (unchanged) {
    query->backoff_steps = 0;
    StartQuery(query, now);
    return;
  }
  if (reset) {
    if (query->observer == nullptr) metrics::Metrics().watch_relists.Get().Increment();
    query->tracker.Reset();
    query->tracker.Observe(index);
  }
  query->resync = false;
  if (query->failures > 0) {
    Log(LogLevel::kInfo, "watch", "'", query->scope.consul_key(), "': recovered after ",
        query->failures, " failed attempt(s)");
    query->failures = 0;
  }
  if (reset && !resync && early) {
    BackOff(query, now, /*suspicious=*/true);
    return;
  }
  // A proper blocking answer ends any back-off; a re-list ends one caused by failures (the
  // server answers again) but not one caused by suspicious answers (they may come back).
  if (query->sent_index != 0 || !query->backoff_suspicious) query->backoff_steps = 0;
  if (resync || replan) query->declined_at = 0;
  if (query->observer != nullptr) {
    StartQuery(query, now);
  } else {
    StartOrSplit(query, response, now);
  }
}

absl::Status IoLoop::DeliverDiff(Query* query, const consul::HttpRequest& request,
                                 const consul::HttpResponse& response, CompareBy compare) {
  absl::StatusOr<DiffResult> diff =
      Diff(&query->snapshot, query->scope, request, response, compare);
  if (!diff.ok()) return diff.status();
  query->snapshot = std::move(diff->next);
  dispatcher_->Enqueue(query->id, std::move(diff->events));
  return absl::OkStatus();
}

absl::Status IoLoop::DeliverKeyState(Query* query, const consul::HttpRequest& request,
                                     const consul::HttpResponse& response) {
  absl::StatusOr<consul::KvGetResult> read = consul::ParseKvGetResponse(request, response);
  if (!read.ok()) return read.status();
  // Whole-entry equality: after an index reset an unchanged key may be reported once more.
  if (query->key_state_reported && read->entry == query->key_state) return absl::OkStatus();
  query->key_state = read->entry;
  query->key_state_reported = true;
  dispatcher_->EnqueueCall(query->id, [observer = query->observer, entry = std::move(read->entry)] {
    (*observer)(entry);
  });
  return absl::OkStatus();
}

absl::StatusOr<DiffResult> IoLoop::Diff(Snapshot* previous, const WatchScope& scope,
                                        const consul::HttpRequest& request,
                                        const consul::HttpResponse& response, CompareBy compare) {
  if (response.status == 200) {
    std::optional<DiffResult> diff =
        DiffListingBody(previous, response.body, scope, options_.key_mapper, compare);
    if (diff.has_value()) return std::move(*diff);
  }
  // 404 (an empty subtree), or a body the fast path does not take.
  absl::StatusOr<consul::KvListResult> listing = consul::ParseKvListResponse(request, response);
  if (!listing.ok()) return listing.status();
  return DiffListing(std::move(*previous), std::move(listing->entries), scope, options_.key_mapper,
                     compare);
}

void IoLoop::Fail(Query* query, const absl::Status& status, const std::string& server,
                  absl::Time now) {
  query->resync = true;  // whatever was missed, the next answer is a full re-list
  if (IsServerFailure(status)) client_->ReportServerFailure(server);
  if (query->failures++ == 0) {
    Log(LogLevel::kWarn, "watch", "'", query->scope.consul_key(), "': ", status.message(),
        "; re-listing with back-off");
  }
  BackOff(query, now, /*suspicious=*/false);
}

void IoLoop::BackOff(Query* query, absl::Time now, bool suspicious) {
  Unsplit(query);
  query->backoff_suspicious = suspicious;
  // The query after a back-off is a plain re-list: whatever happened meanwhile (even an index
  // reset that no parked query saw) is diffed by content at once.
  query->resync = true;
  query->retry_at =
      now + BackoffDelay(options_.retry_min, options_.retry_max, ++query->backoff_steps, rng_);
  timers_.emplace(query->retry_at, query->id);
}

}  // namespace registry::watch::internal

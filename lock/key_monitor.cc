// lock/key_monitor.cc
#include "lock/key_monitor.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/backoff.h"
#include "base/monotonic.h"
#include "consul/client_options.h"
#include "consul/curl_exchange.h"
#include "consul/kv.h"
#include "consul/query.h"

namespace registry::lock {
namespace {

// Longest sleep of the poll loop without a wake-up (a missed wake-up costs at most this).
constexpr absl::Duration kMaxPoll = absl::Seconds(1);
// A query answered sooner than this with an unchanged index is not repeated before it elapses
// (Consul's "rate-limit the loop" rule: a return is no proof of change).
constexpr absl::Duration kMinQueryInterval = absl::Milliseconds(20);
constexpr absl::Duration kFirstBackoff = absl::Milliseconds(100);
constexpr absl::Duration kMaxBackoff = absl::Seconds(5);

absl::Duration Backoff(int failures) {
  static absl::Mutex mu(absl::kConstInit);
  static absl::BitGen* const gen = new absl::BitGen;  // shared by every monitor; never freed
  absl::MutexLock lock(&mu);
  return BackoffDelay(kFirstBackoff, kMaxBackoff, failures, *gen);
}

}  // namespace

// One watched key's query state; owned by the monitor thread.
struct KeyMonitor::Query {
  CURL* easy = nullptr;
  std::unique_ptr<consul::CurlExchange> exchange;  // set while a request is in flight
  consul::IndexTracker tracker;
  absl::Time next_at = absl::InfinitePast();
  absl::Time sent = absl::InfinitePast();
  int failures = 0;
};

KeyMonitor::KeyMonitor(consul::Client& client, consul::Canceller* canceller,
                       absl::Duration block_wait)
    : client_(client),
      canceller_(canceller),
      block_wait_(block_wait),
      multi_((consul::EnsureCurlInitialized(), curl_multi_init())) {
  waker_ = std::make_unique<consul::Canceller::Waker>(canceller_, [this] { Wake(); });
}

KeyMonitor::~KeyMonitor() {
  Stop();
  if (multi_ != nullptr) curl_multi_cleanup(multi_);
}

void KeyMonitor::Wake() {
  if (multi_ != nullptr) curl_multi_wakeup(multi_);
}

void KeyMonitor::EnsureStartedLocked() {
  if (!thread_.joinable() && !stopping_) thread_ = std::thread([this] { Run(); });
}

void KeyMonitor::Watch(uint64_t id, std::string consul_key, std::string session,
                       absl::Time start_at, LostCallback on_lost) {
  bool wake = false;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    targets_[id] = Target{std::move(consul_key), std::move(session), start_at, std::move(on_lost)};
    ++version_;
    if (start_at < absl::InfiniteFuture()) {
      EnsureStartedLocked();
      wake = start_at < planned_wake_;
    }
  }
  if (wake) Wake();
}

void KeyMonitor::Unwatch(uint64_t id) {
  bool wake = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = targets_.find(id);
    if (it == targets_.end()) return;
    // A started query holds a connection open until the thread aborts it.
    wake = it->second.start_at <= MonotonicNow();
    targets_.erase(it);
  }
  if (wake) Wake();
}

void KeyMonitor::Post(std::function<void()> task) {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    tasks_.push_back(std::move(task));
    EnsureStartedLocked();
  }
  Wake();
}

void KeyMonitor::Stop() {
  std::thread thread;
  {
    absl::MutexLock lock(&mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
    thread = std::move(thread_);
  }
  Wake();
  if (thread.joinable()) thread.join();
  waker_.reset();  // the thread is gone: nothing needs waking any more
}

int KeyMonitor::queries_in_flight() const {
  absl::MutexLock lock(&mu_);
  return in_flight_;
}

void KeyMonitor::Run() {
  const consul::CurlOptions curl_options = consul::CurlOptionsFrom(client_.options());
  std::map<uint64_t, std::unique_ptr<Query>> queries;
  struct Snapshot {
    std::string key;
    std::string session;
    absl::Time start_at;
  };

  auto abort = [this](Query& query) {
    if (query.exchange == nullptr) return;
    curl_multi_remove_handle(multi_, query.easy);  // closes the half-read connection
    query.exchange.reset();
  };
  auto destroy = [&abort](Query& query) {
    abort(query);
    if (query.easy != nullptr) curl_easy_cleanup(query.easy);
    query.easy = nullptr;
  };

  for (;;) {
    std::deque<std::function<void()>> tasks;
    std::map<uint64_t, Snapshot> targets;
    bool stopping;
    uint64_t version;
    {
      absl::MutexLock lock(&mu_);
      tasks.swap(tasks_);
      stopping = stopping_;
      version = version_;
      for (const auto& [id, target] : targets_) {
        targets.emplace(id, Snapshot{target.key, target.session, target.start_at});
      }
    }
    for (std::function<void()>& task : tasks) task();
    if (stopping) {
      absl::MutexLock lock(&mu_);
      if (tasks_.empty()) break;
      continue;
    }

    const bool cancelled = canceller_ != nullptr && canceller_->IsCancelled();
    for (auto it = queries.begin(); it != queries.end();) {
      if (cancelled || !targets.contains(it->first)) {
        destroy(*it->second);
        it = queries.erase(it);
      } else {
        ++it;
      }
    }

    // Start the queries that are due.
    absl::Time now = MonotonicNow();
    for (const auto& [id, target] : targets) {
      if (cancelled) break;
      std::unique_ptr<Query>& query = queries[id];
      if (query == nullptr) {
        query = std::make_unique<Query>();
        query->next_at = target.start_at;
      }
      if (query->exchange != nullptr || now < query->next_at) continue;
      consul::QueryOptions options;
      options.index = query->tracker.next_index();
      options.wait = block_wait_;
      absl::StatusOr<consul::HttpRequest> request = consul::BuildKvGetRequest(target.key, options);
      if (query->easy == nullptr) query->easy = curl_easy_init();
      absl::StatusOr<std::unique_ptr<consul::CurlExchange>> exchange =
          absl::InternalError("no curl handle");
      if (request.ok() && query->easy != nullptr) {
        request->server = client_.PreferredServer();
        consul::ApplyClientOptions(client_.options(), &*request);
        exchange = consul::CurlExchange::Start(query->easy, *std::move(request), curl_options);
      }
      if (!exchange.ok()) {
        query->next_at = now + Backoff(++query->failures);
        continue;
      }
      query->exchange = *std::move(exchange);
      query->sent = now;
      curl_multi_add_handle(multi_, query->easy);
    }

    int running = 0;
    curl_multi_perform(multi_, &running);

    // Collect finished queries and judge their answers.
    std::vector<std::pair<uint64_t, absl::Status>> lost;
    int queued = 0;
    while (CURLMsg* message = curl_multi_info_read(multi_, &queued)) {
      if (message->msg != CURLMSG_DONE) continue;
      auto it = std::find_if(queries.begin(), queries.end(), [&](const auto& entry) {
        return entry.second->easy == message->easy_handle;
      });
      if (it == queries.end()) continue;
      Query& query = *it->second;
      const Snapshot& target = targets.at(it->first);
      const CURLcode code = message->data.result;
      curl_multi_remove_handle(multi_, query.easy);
      const consul::HttpRequest request = query.exchange->request();
      absl::StatusOr<consul::HttpResponse> response = query.exchange->Finish(code);
      query.exchange.reset();
      now = MonotonicNow();
      absl::StatusOr<consul::KvGetResult> result =
          response.ok() ? consul::ParseKvGetResponse(request, *response) : response.status();
      if (!result.ok()) {
        if (absl::IsUnavailable(result.status())) client_.ReportServerFailure(request.server);
        query.next_at = now + Backoff(++query.failures);
        continue;
      }
      query.failures = 0;
      if (!result->entry.has_value()) {
        lost.emplace_back(
            it->first, absl::AbortedError(absl::StrCat("lock key '", target.key, "' was deleted")));
      } else if (result->entry->session != target.session) {
        lost.emplace_back(
            it->first, absl::AbortedError(
                           result->entry->session.empty()
                               ? absl::StrCat("lock key '", target.key, "' was released")
                               : absl::StrCat("lock key '", target.key, "' is now held by session ",
                                              result->entry->session)));
      } else if (query.tracker.Observe(result->meta.index) ==
                     consul::IndexTracker::Change::kUnchanged &&
                 now - query.sent < kMinQueryInterval) {
        query.next_at = query.sent + kMinQueryInterval;
      } else {
        query.next_at = now;
      }
    }
    for (auto& [id, reason] : lost) {
      LostCallback on_lost;
      {
        absl::MutexLock lock(&mu_);
        auto it = targets_.find(id);
        if (it != targets_.end()) {
          on_lost = std::move(it->second.on_lost);
          targets_.erase(it);
        }
      }
      destroy(*queries[id]);
      queries.erase(id);
      if (on_lost) on_lost(reason);
    }

    // Sleep until the next query is due, a transfer needs attention or someone wakes us.
    now = MonotonicNow();
    absl::Time due = now + kMaxPoll;
    int in_flight = 0;
    for (const auto& [id, query] : queries) {
      if (query->exchange != nullptr) {
        ++in_flight;
      } else {
        due = std::min(due, query->next_at);
      }
    }
    {
      absl::MutexLock lock(&mu_);
      // A watch added since the snapshot did not wake us (it saw the previous plan): look again.
      if (version_ != version || !tasks_.empty()) due = now;
      planned_wake_ = due;
      in_flight_ = in_flight;
    }
    const int64_t timeout_ms =
        std::clamp<int64_t>(absl::ToInt64Milliseconds(absl::Ceil(due - now, absl::Milliseconds(1))),
                            0, absl::ToInt64Milliseconds(kMaxPoll));
    if (timeout_ms > 0) {
      curl_multi_poll(multi_, nullptr, 0, static_cast<int>(timeout_ms), nullptr);
    }
  }

  for (auto& [id, query] : queries) destroy(*query);
  absl::MutexLock lock(&mu_);
  in_flight_ = 0;
}

}  // namespace registry::lock

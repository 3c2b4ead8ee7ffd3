// SPDX-License-Identifier: Apache-2.0
#include "watch/io_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "base/backoff.h"
#include "base/monotonic.h"
#include "base/status_text.h"
#include "consul/query.h"
#include "watch/watch_metrics.h"

namespace registry::watch::internal {
namespace {

// Longest sleep of epoll_wait: commands and libcurl's timers shorten it; this only bounds the
// effect of a missed wake-up.
constexpr absl::Duration kMaxPoll = absl::Seconds(1);
// Readiness events taken from the kernel per epoll_wait.
constexpr int kMaxEvents = 256;

absl::Status Annotate(const absl::Status& status, absl::string_view consul_key) {
  return Prefixed(absl::StrCat("watch '", consul_key, "'"), status);
}

metrics::Gauge& ActiveWatches(bool key_watch) {
  const WatchKind kind = key_watch ? WatchKind::kKey : WatchKind::kPrefix;
  return WatchMetrics().watches_active.At({metrics::Index(kind)});
}

}  // namespace

IoLoop::Transfer::~Transfer() {
  exchange.reset();  // detaches from `easy` first
  if (easy != nullptr) curl_easy_cleanup(easy);
}

IoLoop::WatchEntry::WatchEntry(IoLoop* loop, WatchState initial)
    : state(std::move(initial)), own(loop, this, kOwnQuery) {}

IoLoop::WatchEntry::~WatchEntry() {
  if (counted_active) ActiveWatches(IsKeyWatch(state)).Add(-1);
}

IoLoop::IoLoop(consul::Client* client, WatchEngineOptions options, Dispatcher* listeners)
    : options_(std::move(options)),
      rules_{.block_query_wait = options_.block_query_wait,
             .split_guard_pause = options_.split_guard_pause,
             .split = SplitLimits{options_.split_threshold, options_.max_queries_per_watch},
             .key_mapper = options_.key_mapper,
             .backoff_delay =
                 [this](int backoffs) {
                   return BackoffDelay(options_.retry_min, options_.retry_max, backoffs, rng_);
                 }},
      exchanges_(*client),
      owned_dispatcher_(listeners == nullptr ? std::make_unique<Dispatcher>(options_.dispatcher)
                                             : nullptr),
      dispatcher_(listeners == nullptr ? owned_dispatcher_.get() : listeners) {}

IoLoop::~IoLoop() {
  Close();
  owned_dispatcher_.reset();  // joins a worker left running by a Close() from inside a listener
  {
    absl::MutexLock lock(&mu_);
    adds_.clear();  // handed over after the IO thread stopped: never in the multi handle
  }
  if (multi_ != nullptr) curl_multi_cleanup(multi_);
  if (epoll_fd_ >= 0) close(epoll_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

absl::Status IoLoop::Start() {
  consul::EnsureCurlInitialized();
  multi_ = curl_multi_init();
  if (multi_ == nullptr)
    return absl::ResourceExhaustedError("watch engine: curl_multi_init failed");
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) {
    return absl::ResourceExhaustedError("watch engine: cannot create epoll/eventfd descriptors");
  }
  epoll_event wake{};
  wake.events = EPOLLIN;
  wake.data.fd = wake_fd_;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &wake) != 0) {
    return absl::ResourceExhaustedError("watch engine: cannot watch the wake-up descriptor");
  }
  // Every watch holds one connection for its blocking query; never queue transfers.
  curl_multi_setopt(multi_, CURLMOPT_MAX_HOST_CONNECTIONS, 0L);
  curl_multi_setopt(multi_, CURLMOPT_MAX_TOTAL_CONNECTIONS, 0L);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &IoLoop::OnSocket);
  curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &IoLoop::OnTimer);
  curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
  dispatcher_->SetSupervisor([this] { Wake(); });  // cleared by Close()
  return absl::OkStatus();
}

absl::StatusOr<WatchId> IoLoop::Watch(std::string consul_key, DataChangedListener listener,
                                      WatchOptions options) {
  {
    absl::MutexLock lock(&mu_);
    if (closed_) {
      return absl::FailedPreconditionError(
          absl::StrCat("watch '", consul_key, "': the watch engine is closed"));
    }
  }
  if (!listener)
    return absl::InvalidArgumentError(absl::StrCat("watch '", consul_key, "': no listener"));
  // The starting view: everything applied after this listing is reported.
  absl::StatusOr<consul::KvListResult> listing = exchanges_.ListNow(consul_key, &canceller_);
  if (!listing.ok()) return Annotate(listing.status(), consul_key);
  std::vector<DataChangedEvent> replay;
  auto watch = std::make_unique<WatchEntry>(
      this, NewTreeWatch(rules_, WatchScope(consul_key), *std::move(listing), &replay));
  if (!options.replay_existing) replay.clear();
  return Register(std::move(watch), std::move(listener), std::move(replay));
}

absl::StatusOr<WatchId> IoLoop::WatchKey(std::string consul_key, KeyObserver observer,
                                         KeyWatchOptions options) {
  if (consul_key.empty()) return absl::InvalidArgumentError("watch key: the key is empty");
  if (!observer) {
    return absl::InvalidArgumentError(absl::StrCat("watch key '", consul_key, "': no observer"));
  }
  absl::Status valid = consul::BuildKvGetRequest(consul_key, {}).status();
  if (!valid.ok()) return Annotate(valid, consul_key);
  auto watch = std::make_unique<WatchEntry>(
      this, NewKeyWatch(WatchScope(std::move(consul_key)), options.start_at));
  watch->observer = std::make_shared<const KeyObserver>(std::move(observer));
  return Register(std::move(watch), nullptr, {});
}

absl::StatusOr<WatchId> IoLoop::Register(std::unique_ptr<WatchEntry> watch,
                                         DataChangedListener listener,
                                         std::vector<DataChangedEvent> replay) {
  const std::string& consul_key = watch->state.scope.consul_key();
  watch->own.easy = curl_easy_init();
  if (watch->own.easy == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("watch '", consul_key, "': cannot allocate a curl handle"));
  }
  WatchId id = 0;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) {
      return absl::FailedPreconditionError(
          absl::StrCat("watch '", consul_key, "': the watch engine is closed"));
    }
    id = next_id_++;
    watch->id = id;
    live_.insert(id);
    dispatcher_->Add(id, std::move(listener));
    dispatcher_->Enqueue(id, std::move(replay));
    watch->counted_active = true;
    ActiveWatches(IsKeyWatch(watch->state)).Add(1);
    adds_.push_back(std::move(watch));
    if (!io_running_) {
      // The first watch: an engine that never watches costs no thread.
      io_running_ = true;
      thread_ = std::thread([this] { Run(); });
    }
  }
  Wake();
  return id;
}

void IoLoop::Remove(WatchId id) {
  dispatcher_->Remove(id);  // first: from here on no callback of `id`
  {
    absl::MutexLock lock(&mu_);
    if (!live_.erase(id) || closed_) return;
    removes_.push_back(id);
  }
  Wake();
}

void IoLoop::Close() {
  absl::flat_hash_set<WatchId> live;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return;
    closed_ = true;  // from here on no Register() starts the thread: thread_ is stable
    live.swap(live_);
  }
  canceller_.Cancel();
  if (wake_fd_ >= 0) Wake();
  if (thread_.joinable()) thread_.join();
  {
    absl::MutexLock lock(&mu_);
    io_running_ = false;
  }
  dispatcher_->SetSupervisor(nullptr);  // no Wake() after this: the eventfd may go
  if (owned_dispatcher_ != nullptr) {
    owned_dispatcher_->Stop();
    return;
  }
  // A lent dispatcher serves its owner on: only this engine's listeners leave it.
  for (WatchId id : live) dispatcher_->Remove(id);
}

size_t IoLoop::background_threads() const {
  size_t threads = owned_dispatcher_ != nullptr ? owned_dispatcher_->worker_count() : 0;
  absl::MutexLock lock(&mu_);
  return threads + (io_running_ ? 1 : 0);
}

size_t IoLoop::watch_count() const {
  absl::MutexLock lock(&mu_);
  return live_.size();
}

void IoLoop::Run() {
  epoll_event events[kMaxEvents];
  while (TakeCommands()) {
    FireDueTimers(MonotonicNow());
    int running = 0;
    if (curl_deadline_ <= MonotonicNow()) {
      curl_deadline_ = absl::InfiniteFuture();
      curl_multi_socket_action(multi_, CURL_SOCKET_TIMEOUT, 0, &running);
    }
    CompleteFinished();

    absl::Time deadline = std::min(dispatcher_->Supervise(MonotonicNow()), curl_deadline_);
    if (!timers_.empty()) deadline = std::min(deadline, timers_.top().first);
    absl::Duration sleep = std::clamp(deadline - MonotonicNow(), absl::ZeroDuration(), kMaxPoll);
    int timeout_ms =
        static_cast<int>(absl::ToInt64Milliseconds(absl::Ceil(sleep, absl::Milliseconds(1))));
    const int ready = epoll_wait(epoll_fd_, events, kMaxEvents, timeout_ms);
    for (int i = 0; i < ready; ++i) OnReady(events[i]);
    CompleteFinished();
  }
  DropAllOldestConnectionFirst();
}

bool IoLoop::TakeCommands() {
  std::vector<std::unique_ptr<WatchEntry>> adds;
  std::vector<WatchId> removes;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return false;
    adds.swap(adds_);
    removes.swap(removes_);
  }
  const absl::Time now = MonotonicNow();
  // Adds before removes: a watch removed right after it was added is in both lists.
  for (std::unique_ptr<WatchEntry>& watch : adds) {
    WatchEntry* raw = watch.get();
    watches_[raw->id] = std::move(watch);
    Step(raw, Started{now}, now);
  }
  for (WatchId id : removes) {
    auto it = watches_.find(id);
    if (it == watches_.end()) continue;
    DropWatch(it->second.get());
    watches_.erase(it);
  }
  return true;
}

void IoLoop::FireDueTimers(absl::Time now) {
  while (!timers_.empty() && timers_.top().first <= now) {
    auto [at, id] = timers_.top();
    timers_.pop();
    auto it = watches_.find(id);
    // The machine starts the query waiting for `at`, if any (else the timer is stale).
    if (it != watches_.end()) Step(it->second.get(), TimerFired{at, now}, now);
  }
}

void IoLoop::OnReady(const epoll_event& event) {
  const int fd = event.data.fd;
  if (fd == wake_fd_) {
    uint64_t count = 0;
    while (read(wake_fd_, &count, sizeof(count)) > 0) {
    }
    return;
  }
  int flags = 0;
  if (event.events & EPOLLIN) flags |= CURL_CSELECT_IN;
  if (event.events & EPOLLOUT) flags |= CURL_CSELECT_OUT;
  if (event.events & (EPOLLERR | EPOLLHUP)) flags |= CURL_CSELECT_ERR;
  int running = 0;
  curl_multi_socket_action(multi_, fd, flags, &running);
}

void IoLoop::DropAllOldestConnectionFirst() {
  // libcurl finds a connection to close by walking its per-host list from the oldest one, so
  // this order keeps closing thousands of parked queries linear.
  std::vector<std::pair<uint64_t, Transfer*>> order;
  order.reserve(watches_.size());
  auto add = [this, &order](Transfer* transfer) {
    curl_socket_t socket = CURL_SOCKET_BAD;
    uint64_t serial = 0;
    if (transfer->exchange != nullptr &&
        curl_easy_getinfo(transfer->easy, CURLINFO_ACTIVESOCKET, &socket) == CURLE_OK) {
      serial = sockets_.SerialOf(socket);
    }
    order.emplace_back(serial, transfer);
  };
  for (auto& [id, watch] : watches_) {
    add(&watch->own);
    for (auto& probe : watch->probes) add(probe.get());
  }
  std::sort(order.begin(), order.end());
  for (auto& [serial, transfer] : order) Drop(transfer);
  watches_.clear();
}

void IoLoop::Wake() {
  const uint64_t one = 1;
  // A full counter (never in practice) already means "wake up"; nothing to handle.
  (void)!write(wake_fd_, &one, sizeof(one));
}

int IoLoop::OnSocket(CURL* easy, curl_socket_t socket, int what, void* data, void* assigned) {
  auto* self = static_cast<IoLoop*>(data);
  if (what == CURL_POLL_REMOVE) {
    // libcurl may say so after closing the socket, when its number may be another's by now.
    if (self->sockets_.ShouldUnregister(socket, assigned)) {
      epoll_ctl(self->epoll_fd_, EPOLL_CTL_DEL, socket, nullptr);
    }
    return 0;
  }
  epoll_event event{};
  event.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
  event.data.fd = socket;
  const int first = assigned == nullptr ? EPOLL_CTL_ADD : EPOLL_CTL_MOD;
  if (epoll_ctl(self->epoll_fd_, first, socket, &event) != 0 &&
      (errno == EEXIST || errno == ENOENT)) {
    epoll_ctl(self->epoll_fd_, first == EPOLL_CTL_ADD ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, socket,
              &event);
  }
  // Renewed on every change: the registration now belongs to the socket open under this number.
  curl_multi_assign(self->multi_, socket, self->sockets_.TokenFor(socket));
  return 0;
}

int IoLoop::OnTimer(CURLM* multi, long timeout_ms, void* data) {
  auto* self = static_cast<IoLoop*>(data);
  self->curl_deadline_ =
      timeout_ms < 0 ? absl::InfiniteFuture() : MonotonicNow() + absl::Milliseconds(timeout_ms);
  return 0;
}

}  // namespace registry::watch::internal

#include "watch/io_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "base/monotonic.h"
#include "base/plugin_metrics.h"
#include "base/status_text.h"
#include "consul/query.h"

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
  const metrics::WatchKind kind =
      key_watch ? metrics::WatchKind::kKey : metrics::WatchKind::kPrefix;
  return metrics::Metrics().watches_active.At({metrics::Index(kind)});
}

}  // namespace

IoLoop::Query::Query(IoLoop* loop, WatchScope scope) : loop(loop), scope(std::move(scope)) {}

IoLoop::Query::~Query() {
  exchange.reset();  // detaches from `easy` first
  if (easy != nullptr) curl_easy_cleanup(easy);
  if (counted_active) ActiveWatches(observer != nullptr).Add(-1);
}

IoLoop::IoLoop(consul::Client* client, WatchEngineOptions options)
    : options_(std::move(options)),
      client_(client),
      curl_options_(consul::CurlOptionsFrom(client->options())) {}

IoLoop::~IoLoop() {
  Close();
  dispatcher_.reset();  // joins a worker left running by a Close() from inside a listener
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
  dispatcher_ = std::make_unique<Dispatcher>(options_.dispatcher, [this] { Wake(); });
  absl::MutexLock lock(&mu_);
  io_running_ = true;
  thread_ = std::thread([this] { Run(); });
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
  absl::StatusOr<consul::KvListResult> listing = client_->KvList(consul_key, {}, &canceller_);
  if (!listing.ok()) return Annotate(listing.status(), consul_key);
  WatchScope scope(consul_key);
  std::optional<SplitPlan> plan;
  const bool worth_planning = WorthPlanning(listing->entries.size(), /*declined_at=*/0);
  if (worth_planning) {
    std::vector<ListedKey> keys;
    keys.reserve(listing->entries.size());
    for (const consul::DirEntry& entry : listing->entries) {
      keys.push_back(ListedKey{entry.key, entry.modify_index});
    }
    plan = PlanSplit(scope, keys, split_limits());
  }
  DiffResult initial = DiffListing({}, std::move(listing->entries), scope, options_.key_mapper,
                                   CompareBy::kModifyIndex);
  auto query = std::make_unique<Query>(this, std::move(scope));
  query->plan = std::move(plan);
  if (worth_planning && !query->plan.has_value()) query->declined_at = initial.next.size();
  query->snapshot = std::move(initial.next);
  query->tracker.Observe(listing->meta.index);
  std::vector<DataChangedEvent> replay;
  if (options.replay_existing) replay = std::move(initial.events);
  return Register(std::move(query), std::move(listener), std::move(replay));
}

absl::StatusOr<WatchId> IoLoop::WatchKey(std::string consul_key, KeyObserver observer,
                                         KeyWatchOptions options) {
  if (consul_key.empty()) return absl::InvalidArgumentError("watch key: the key is empty");
  if (!observer) {
    return absl::InvalidArgumentError(absl::StrCat("watch key '", consul_key, "': no observer"));
  }
  absl::Status valid = consul::BuildKvGetRequest(consul_key, {}).status();
  if (!valid.ok()) return Annotate(valid, consul_key);
  auto query = std::make_unique<Query>(this, WatchScope(std::move(consul_key)));
  query->observer = std::make_shared<const KeyObserver>(std::move(observer));
  query->start_at = options.start_at;
  return Register(std::move(query), nullptr, {});
}

absl::StatusOr<WatchId> IoLoop::Register(std::unique_ptr<Query> query, DataChangedListener listener,
                                         std::vector<DataChangedEvent> replay) {
  const std::string& consul_key = query->scope.consul_key();
  query->easy = curl_easy_init();
  if (query->easy == nullptr) {
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
    query->id = id;
    live_.insert(id);
    dispatcher_->Add(id, std::move(listener));
    dispatcher_->Enqueue(id, std::move(replay));
    query->counted_active = true;
    ActiveWatches(query->observer != nullptr).Add(1);
    adds_.push_back(std::move(query));
  }
  Wake();
  return id;
}

bool IoLoop::Post(std::function<void()> task) {
  return dispatcher_ != nullptr && dispatcher_->Post(std::move(task));
}

bool IoLoop::InTask() const { return dispatcher_ != nullptr && dispatcher_->InTask(); }

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
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return;
    closed_ = true;
    live_.clear();
  }
  canceller_.Cancel();
  if (wake_fd_ >= 0) Wake();
  if (thread_.joinable()) thread_.join();
  {
    absl::MutexLock lock(&mu_);
    io_running_ = false;
  }
  if (dispatcher_ != nullptr) dispatcher_->Stop();
}

size_t IoLoop::background_threads() const {
  size_t threads = dispatcher_ != nullptr ? dispatcher_->worker_count() : 0;
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
  std::vector<std::unique_ptr<Query>> adds;
  std::vector<WatchId> removes;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return false;
    adds.swap(adds_);
    removes.swap(removes_);
  }
  const absl::Time now = MonotonicNow();
  // Adds before removes: a watch removed right after it was added is in both lists.
  for (std::unique_ptr<Query>& query : adds) {
    Query* raw = query.get();
    queries_[raw->id] = std::move(query);
    if (raw->start_at > now) {
      raw->retry_at = raw->start_at;
      timers_.emplace(raw->retry_at, raw->id);
    } else if (raw->plan.has_value()) {
      StartProbes(raw, now);
    } else {
      StartQuery(raw, now);
    }
  }
  for (WatchId id : removes) {
    auto it = queries_.find(id);
    if (it == queries_.end()) continue;
    Drop(it->second.get());
    queries_.erase(it);
  }
  return true;
}

void IoLoop::FireDueTimers(absl::Time now) {
  while (!timers_.empty() && timers_.top().first <= now) {
    auto [at, id] = timers_.top();
    timers_.pop();
    auto it = queries_.find(id);
    Query* due = it == queries_.end() ? nullptr : DueAt(it->second.get(), at);
    if (due != nullptr) StartQuery(due, now);  // else a stale timer
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
  std::vector<std::pair<uint64_t, Query*>> order;
  order.reserve(queries_.size());
  auto add = [this, &order](Query* query) {
    curl_socket_t socket = CURL_SOCKET_BAD;
    uint64_t serial = 0;
    if (query->exchange != nullptr &&
        curl_easy_getinfo(query->easy, CURLINFO_ACTIVESOCKET, &socket) == CURLE_OK) {
      auto it = socket_serial_.find(socket);
      if (it != socket_serial_.end()) serial = it->second;
    }
    order.emplace_back(serial, query);
  };
  for (auto& [id, query] : queries_) {
    add(query.get());
    for (auto& probe : query->probes) add(probe.get());
  }
  std::sort(order.begin(), order.end());
  for (auto& [serial, query] : order) Drop(query);
  queries_.clear();
}

void IoLoop::Wake() {
  const uint64_t one = 1;
  // A full counter (never in practice) already means "wake up"; nothing to handle.
  (void)!write(wake_fd_, &one, sizeof(one));
}

int IoLoop::OnSocket(CURL* easy, curl_socket_t socket, int what, void* data, void* assigned) {
  auto* self = static_cast<IoLoop*>(data);
  if (what == CURL_POLL_REMOVE) {
    epoll_ctl(self->epoll_fd_, EPOLL_CTL_DEL, socket, nullptr);  // may be closed already
    return 0;
  }
  epoll_event event{};
  event.events = ((what & CURL_POLL_IN) ? EPOLLIN : 0u) | ((what & CURL_POLL_OUT) ? EPOLLOUT : 0u);
  event.data.fd = socket;
  if (assigned == nullptr) {
    if (epoll_ctl(self->epoll_fd_, EPOLL_CTL_ADD, socket, &event) != 0 && errno == EEXIST) {
      epoll_ctl(self->epoll_fd_, EPOLL_CTL_MOD, socket, &event);
    }
    curl_multi_assign(self->multi_, socket, self);  // any non-null marker: "registered"
  } else if (epoll_ctl(self->epoll_fd_, EPOLL_CTL_MOD, socket, &event) != 0 && errno == ENOENT) {
    epoll_ctl(self->epoll_fd_, EPOLL_CTL_ADD, socket, &event);
  }
  return 0;
}

int IoLoop::OnTimer(CURLM* multi, long timeout_ms, void* data) {
  auto* self = static_cast<IoLoop*>(data);
  self->curl_deadline_ =
      timeout_ms < 0 ? absl::InfiniteFuture() : MonotonicNow() + absl::Milliseconds(timeout_ms);
  return 0;
}

void IoLoop::CompleteFinished() {
  std::vector<std::pair<CURL*, CURLcode>> done;
  int queued = 0;
  while (CURLMsg* message = curl_multi_info_read(multi_, &queued)) {
    if (message->msg == CURLMSG_DONE) done.emplace_back(message->easy_handle, message->data.result);
  }
  const absl::Time now = MonotonicNow();
  for (auto [easy, result] : done) {
    char* pointer = nullptr;
    curl_easy_getinfo(easy, CURLINFO_PRIVATE, &pointer);
    Query* query = reinterpret_cast<Query*>(pointer);
    if (query != nullptr && query->exchange != nullptr) Complete(query, result, now);
  }
  retired_.clear();
}

absl::StatusOr<consul::HttpRequest> IoLoop::BuildRequest(const Query& query,
                                                         const consul::QueryOptions& options) {
  const std::string& key = query.scope.consul_key();
  if (query.observer != nullptr) return consul::BuildKvGetRequest(key, options);
  if (!query.probe.has_value()) return consul::BuildKvListRequest(key, options);
  switch (query.probe->kind) {
    case Probe::Kind::kKey:
      return consul::BuildKvGetRequest(key, options);
    case Probe::Kind::kGuard:
      return consul::BuildKvKeysRequest(key, "/", options);
    case Probe::Kind::kTree:
      break;
  }
  return consul::BuildKvListRequest(key, options);
}

void IoLoop::StartQuery(Query* query, absl::Time now) {
  query->retry_at = absl::InfiniteFuture();
  consul::QueryOptions options;
  options.index = query->resync || query->replan ? 0 : query->tracker.next_index();
  options.wait = options_.block_query_wait;
  absl::StatusOr<consul::HttpRequest> request = BuildRequest(*query, options);
  const std::string server = client_->PreferredServer();
  if (!request.ok()) {
    Fail(WatchOf(query), request.status(), server, now);
    return;
  }
  request->server = server;
  consul::ApplyClientOptions(client_->options(), &*request);
  absl::StatusOr<std::unique_ptr<consul::CurlExchange>> exchange =
      consul::CurlExchange::Start(query->easy, *std::move(request), curl_options_);
  if (!exchange.ok()) {
    Fail(WatchOf(query), exchange.status(), server, now);
    return;
  }
  curl_easy_setopt(query->easy, CURLOPT_PRIVATE, reinterpret_cast<char*>(query));
  curl_easy_setopt(query->easy, CURLOPT_OPENSOCKETFUNCTION, &IoLoop::OpenSocket);
  curl_easy_setopt(query->easy, CURLOPT_OPENSOCKETDATA, query);
  query->sent_index = options.index;
  query->refused_new_connection = false;
  CURLMcode added = curl_multi_add_handle(multi_, query->easy);
  if (added != CURLM_OK) {
    exchange->reset();
    Fail(WatchOf(query),
         absl::ResourceExhaustedError(
             absl::StrCat("curl_multi_add_handle: ", curl_multi_strerror(added))),
         server, now);
    return;
  }
  query->exchange = *std::move(exchange);
  query->sent_at = now;
}

curl_socket_t IoLoop::OpenSocket(void* data, curlsocktype purpose, curl_sockaddr* address) {
  auto* query = static_cast<Query*>(data);
  if (purpose == CURLSOCKTYPE_IPCXN && query->sent_index != 0 && !query->trust_new_connection) {
    query->refused_new_connection = true;
    return CURL_SOCKET_BAD;
  }
  const curl_socket_t opened = socket(address->family, address->socktype, address->protocol);
  if (opened != CURL_SOCKET_BAD) query->loop->socket_serial_[opened] = ++query->loop->socket_count_;
  return opened;
}

void IoLoop::Drop(Query* query) {
  for (auto& probe : query->probes) Drop(probe.get());
  if (query->exchange == nullptr) return;
  curl_multi_remove_handle(multi_, query->easy);
  query->exchange.reset();
}

}  // namespace registry::watch::internal

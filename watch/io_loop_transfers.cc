// SPDX-License-Identifier: Apache-2.0
// watch/io_loop_transfers.cc
//
// The IO loop as the driver of the query machine (query_machine.h), on the IO thread: what
// libcurl reports becomes the machine's inputs, and the actions it returns become requests,
// timers, split transfers, listener events and log lines. The rest of the loop is in io_loop.cc.
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/log.h"
#include "base/monotonic.h"
#include "consul/kv.h"
#include "consul/kv_listing_decoder.h"
#include "consul/query.h"
#include "watch/io_loop.h"
#include "watch/watch_metrics.h"

namespace registry::watch::internal {
namespace {

// The request of a Send.
absl::StatusOr<consul::HttpRequest> BuildRequest(const Send& send,
                                                 const consul::QueryOptions& options) {
  switch (send.read) {
    case ReadKind::kGet:
      return consul::BuildKvGetRequest(send.key, options);
    case ReadKind::kNames:
      return consul::BuildKvKeysRequest(send.key, "/", options);
    case ReadKind::kList:
      break;
  }
  return consul::BuildKvListRequest(send.key, options);
}

}  // namespace

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
    Transfer* transfer = reinterpret_cast<Transfer*>(pointer);
    // A transfer dropped meanwhile (its split ended while handling an earlier one) is skipped.
    if (transfer != nullptr && transfer->exchange != nullptr) Complete(transfer, result, now);
  }
  retired_.clear();
}

void IoLoop::Complete(Transfer* transfer, CURLcode result, absl::Time now) {
  curl_multi_remove_handle(multi_, transfer->easy);
  std::unique_ptr<consul::CurlExchange> exchange = std::move(transfer->exchange);
  const consul::HttpRequest& request = exchange->request();
  absl::StatusOr<consul::HttpResponse> response = exchange->Finish(result);
  WatchEntry* watch = transfer->watch;
  if (transfer->refused_new_connection) {
    Step(watch, ConnectionRefused{now}, now);
    return;
  }
  absl::StatusOr<consul::QueryMeta> meta = consul::ParseKvReadAnswer(request, response);
  // Metrics, and the connection state (the session keeper listens) hears watches too.
  exchanges_.Complete(request, response, meta.status(),
                      now - QueryOf(watch->state, transfer->query).sent_at);
  Answered answer{transfer->query, now, &request, std::move(meta),
                  response.ok() ? &*response : nullptr};
  Step(watch, std::move(answer), now, request.server);
}

void IoLoop::Step(WatchEntry* watch, const QueryInput& input, absl::Time now,
                  const std::string& server) {
  for (QueryAction& action : Transition(rules_, &watch->state, input)) {
    bool go_on = true;
    std::visit(
        [&](auto& act) {
          using Act = std::decay_t<decltype(act)>;
          if constexpr (std::is_same_v<Act, Send>) {
            go_on = StartRequest(watch, act, now);
          } else if constexpr (std::is_same_v<Act, Wait>) {
            timers_.emplace(act.until, watch->id);
          } else if constexpr (std::is_same_v<Act, OpenProbes>) {
            go_on = OpenProbeTransfers(watch, act.count, now);
          } else if constexpr (std::is_same_v<Act, CloseProbes>) {
            CloseProbeTransfers(watch);
          } else if constexpr (std::is_same_v<Act, Deliver>) {
            dispatcher_->Enqueue(watch->id, std::move(act.events));
          } else if constexpr (std::is_same_v<Act, ReportKey>) {
            dispatcher_->EnqueueCall(
                watch->id,
                [observer = watch->observer, entry = std::move(act.entry)] { (*observer)(entry); });
          } else if constexpr (std::is_same_v<Act, AvoidServer>) {
            exchanges_.AvoidServer(server);
          } else if constexpr (std::is_same_v<Act, CountRelist>) {
            WatchMetrics().watch_relists.Get().Increment();
          } else if constexpr (std::is_same_v<Act, Note>) {
            Log(act.level, "watch", act.text);
          }
        },
        action);
    // The machine has taken what happened instead (NotSent, ProbesRefused), and its actions
    // were performed: the rest of these are out of date.
    if (!go_on) return;
  }
}

bool IoLoop::StartRequest(WatchEntry* watch, const Send& send, absl::Time now) {
  Transfer* transfer =
      send.query == kOwnQuery ? &watch->own : watch->probes[static_cast<size_t>(send.query)].get();
  consul::QueryOptions options;
  options.index = send.index;
  options.wait = options_.block_query_wait;
  // A read with index 0 (a start, a re-list) decides what the listener is told against nothing
  // it knows: rule 5 of query_machine.h.
  options.consistent = send.index == 0;
  absl::StatusOr<consul::HttpRequest> request = exchanges_.Prepare(BuildRequest(send, options));
  if (!request.ok()) {
    Step(watch, NotSent{request.status(), now}, now);
    return false;
  }
  const std::string server = request->server;
  absl::StatusOr<std::unique_ptr<consul::CurlExchange>> exchange =
      consul::CurlExchange::Start(transfer->easy, *std::move(request), exchanges_.curl_options());
  if (!exchange.ok()) {
    Step(watch, NotSent{exchange.status(), now}, now, server);
    return false;
  }
  curl_easy_setopt(transfer->easy, CURLOPT_PRIVATE, reinterpret_cast<char*>(transfer));
  curl_easy_setopt(transfer->easy, CURLOPT_OPENSOCKETFUNCTION, &IoLoop::OpenSocket);
  curl_easy_setopt(transfer->easy, CURLOPT_OPENSOCKETDATA, transfer);
  curl_easy_setopt(transfer->easy, CURLOPT_CLOSESOCKETFUNCTION, &IoLoop::CloseSocket);
  curl_easy_setopt(transfer->easy, CURLOPT_CLOSESOCKETDATA, this);
  transfer->refused_new_connection = false;
  CURLMcode added = curl_multi_add_handle(multi_, transfer->easy);
  if (added != CURLM_OK) {
    exchange->reset();
    Step(watch,
         NotSent{absl::ResourceExhaustedError(
                     absl::StrCat("curl_multi_add_handle: ", curl_multi_strerror(added))),
                 now},
         now, server);
    return false;
  }
  transfer->exchange = *std::move(exchange);
  return true;
}

bool IoLoop::OpenProbeTransfers(WatchEntry* watch, size_t count, absl::Time now) {
  for (size_t i = 0; i < count; ++i) {
    auto transfer = std::make_unique<Transfer>(this, watch, static_cast<QueryIndex>(i));
    transfer->easy = curl_easy_init();
    if (transfer->easy == nullptr) {  // none has a request yet: they may go at once
      watch->probes.clear();
      Step(watch, ProbesRefused{now}, now);
      return false;
    }
    watch->probes.push_back(std::move(transfer));
  }
  return true;
}

void IoLoop::CloseProbeTransfers(WatchEntry* watch) {
  for (std::unique_ptr<Transfer>& probe : watch->probes) {
    Drop(probe.get());
    retired_.push_back(std::move(probe));
  }
  watch->probes.clear();
}

curl_socket_t IoLoop::OpenSocket(void* data, curlsocktype purpose, curl_sockaddr* address) {
  auto* transfer = static_cast<Transfer*>(data);
  if (purpose == CURLSOCKTYPE_IPCXN &&
      !MayOpenConnection(transfer->watch->state, transfer->query)) {
    transfer->refused_new_connection = true;
    return CURL_SOCKET_BAD;
  }
  const curl_socket_t opened = socket(address->family, address->socktype, address->protocol);
  if (opened != CURL_SOCKET_BAD) transfer->loop->sockets_.Opened(opened);
  return opened;
}

int IoLoop::CloseSocket(void* data, curl_socket_t socket) {
  static_cast<IoLoop*>(data)->sockets_.Closed(socket);
  return close(socket);
}

void IoLoop::Drop(Transfer* transfer) {
  if (transfer->exchange == nullptr) return;
  curl_multi_remove_handle(multi_, transfer->easy);
  transfer->exchange.reset();
}

void IoLoop::DropWatch(WatchEntry* watch) {
  for (std::unique_ptr<Transfer>& probe : watch->probes) Drop(probe.get());
  Drop(&watch->own);
}

}  // namespace registry::watch::internal

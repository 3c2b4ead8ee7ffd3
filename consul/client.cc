// SPDX-License-Identifier: Apache-2.0
#include "consul/client.h"

#include <algorithm>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "base/backoff.h"
#include "base/log.h"
#include "base/monotonic.h"
#include "base/status_macros.h"
#include "base/status_text.h"
#include "consul/curl_transport.h"
#include "consul/errors.h"
#include "consul/exchange_metrics.h"
#include "consul/status.h"
#include "consul/tls_errors.h"

namespace registry::consul {
namespace {

// A request cut, or never sent, because its canceller's deadline passed.
absl::Status CallerDeadlineError(const HttpRequest& request, absl::string_view detail) {
  return absl::DeadlineExceededError(
      absl::StrCat(RequestLabel(request), ": the caller's deadline passed (", detail, ")"));
}

// Sleeps for `delay` unless `canceller` (may be null) is cancelled first; false when it was.
bool PauseUnlessCancelled(Canceller* canceller, absl::Duration delay) {
  WakeupSignal wakeup;
  Canceller::Waker waker(canceller, [&wakeup] { wakeup.Notify(); });
  if (waker.cancelled()) return false;
  wakeup.WaitFor(delay);
  return canceller == nullptr || !canceller->IsCancelled();
}

// How long one server may take over `request` in a round over `count` servers. A server that
// holds requests (a follower waiting for a leader it cannot reach, a stalled process) must not
// eat the whole call while another one would answer: a request that may move on after a timeout
// (replay-safe, not a blocking read, whose wait is the point) gives each server an equal share,
// never under kMinServerShare unless the whole timeout is shorter.
absl::Duration ServerShare(const HttpRequest& request, absl::Duration timeout, size_t count) {
  if (count < 2 || !request.replay_safe || request.wait > absl::ZeroDuration()) return timeout;
  return std::max(timeout / static_cast<int64_t>(count), std::min(timeout, kMinServerShare));
}

// Call()'s parser for an answer that only succeeds or fails: `parse` returns a Status.
template <typename StatusParser>
auto SuccessParser(StatusParser parse) {
  return [parse](const HttpRequest& request, const HttpResponse& response) -> absl::StatusOr<bool> {
    RETURN_IF_ERROR(parse(request, response));
    return true;
  };
}

}  // namespace

absl::StatusOr<std::unique_ptr<Client>> Client::Create(ClientOptions options) {
  RETURN_IF_ERROR(ValidateClientOptions(options));
  CurlOptions curl = CurlOptionsFrom(options);
  return Create(std::move(options), std::make_shared<CurlTransport>(std::move(curl)));
}

absl::StatusOr<std::unique_ptr<Client>> Client::Create(ClientOptions options,
                                                       std::shared_ptr<Transport> transport) {
  RETURN_IF_ERROR(ValidateClientOptions(options));
  if (transport == nullptr) return absl::InvalidArgumentError("transport: must not be null");
  ASSIGN_OR_RETURN(std::vector<ServerAddress> servers, ParseServerList(options.servers));
  return std::unique_ptr<Client>(
      new Client(std::move(options), std::move(servers), std::move(transport)));
}

Client::Client(ClientOptions options, std::vector<ServerAddress> servers,
               std::shared_ptr<Transport> transport)
    : options_(std::move(options)), servers_(std::move(servers)), transport_(std::move(transport)) {
  RegisterLogSecret(options_.token);
}

Client::~Client() { UnregisterLogSecret(options_.token); }

absl::Status Client::Redact(absl::Status status) const {
  if (options_.token.empty() || !absl::StrContains(status.message(), options_.token)) {
    return status;
  }
  return WithMessage(status,
                     absl::StrReplaceAll(status.message(), {{options_.token, "<redacted>"}}));
}

absl::StatusOr<HttpResponse> Client::Execute(HttpRequest request, Canceller* canceller) {
  if (canceller != nullptr && canceller->IsCancelled()) {
    return absl::CancelledError(
        absl::StrCat(RequestLabel(request), ": cancelled before it started"));
  }
  ApplyClientOptions(options_, &request);
  const absl::Time deadline = canceller != nullptr ? canceller->deadline() : absl::InfiniteFuture();
  // An election or a server restart lasts seconds: rounds that failed only for such reasons are
  // made again until the request's own timeout has passed since the call began. A blocking read
  // gets one round: its caller loops over blocking reads anyway.
  const bool blocking = request.wait > absl::ZeroDuration();
  const absl::Time retry_until =
      std::min(deadline, absl::Now() + std::min(request.timeout, options_.request_timeout));
  Backoff backoff(kFirstRetryDelay, kMaxRetryDelay);
  std::optional<absl::StatusOr<HttpResponse>> resent_after;  // the last round that failed
  for (;;) {
    Round round = TryEveryServer(request, deadline, canceller);
    // A call the caller's deadline cut while it was being made again failed for the reason it
    // was made again: that is its result. A cut alone would say that Consul was only slow, and
    // "not sent" would hide that an earlier round's request may have been applied.
    if (round.cut && resent_after.has_value()) return *std::move(resent_after);
    if (!round.retry_later || blocking) return std::move(round.result);
    // Told now, not only when the call ends: a renewal riding out an election may take until
    // its session's loss deadline, and the outage must show (SUSPENDED) before that.
    reachability_listeners_.Notify(false);
    const absl::Duration delay = backoff.Next();
    if (absl::Now() + delay >= retry_until) return std::move(round.result);
    resent_after = std::move(round.result);
    if (!PauseUnlessCancelled(canceller, delay)) {
      return absl::CancelledError(
          absl::StrCat(RequestLabel(request), ": cancelled while retrying"));
    }
  }
}

Client::Round Client::TryEveryServer(HttpRequest request, absl::Time deadline,
                                     Canceller* canceller) {
  const absl::Duration timeout = request.timeout;
  const size_t count = servers_.size();
  const size_t first = preferred_.load(std::memory_order_relaxed) % count;
  absl::StatusOr<HttpResponse> last = absl::InternalError("no server tried");
  // A certificate rejected by either side stays rejected until a file changes: a round in which
  // every server failed so is not made again, so a misconfiguration fails the call at once
  // instead of after request_timeout of identical failures.
  bool only_certificate_errors = true;
  for (size_t attempt = 0; attempt < count; ++attempt) {
    const size_t index = (first + attempt) % count;
    request.server = servers_[index].base_url;
    // A caller's deadline cuts the exchange: nothing may outlive the call that made it.
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return Round{NotSent(CallerDeadlineError(request, "before it was sent")), false, true};
    }
    // Rounded up: the transport counts whole milliseconds, and must not give up before it.
    request.timeout =
        std::min(ServerShare(request, timeout, count), absl::Ceil(left, absl::Milliseconds(1)));
    const absl::Time sent_at = MonotonicNow();
    last = transport_->Execute(request, canceller);
    RecordExchange(request, last, MonotonicNow() - sent_at);
    only_certificate_errors = only_certificate_errors && IsCertificateError(last.status());
    if (last.ok()) {
      const LeaderFailure failure = LeaderFailureOf(*last);
      if (failure == LeaderFailure::kNone) {
        preferred_.store(index, std::memory_order_relaxed);
        return Round{std::move(last), false};
      }
      // A write forwarded to a leader that died may have been applied: its caller resolves that.
      if (failure == LeaderFailure::kOutcomeUnknown && !request.replay_safe) {
        return Round{std::move(last), false};
      }
      continue;  // another server may know a leader, or this one may soon
    }
    const absl::Status& error = last.status();
    if (absl::IsCancelled(error)) return Round{Redact(error), false};
    // The transport counts whole milliseconds and its timer may fire up to one early: a failure
    // that close to the caller's deadline is the deadline cutting the exchange.
    if (absl::Now() + absl::Milliseconds(1) >= deadline) {
      return Round{CallerDeadlineError(request, Redact(error).message()), false, true};
    }
    const bool may_resend =
        IsConnectionError(error) || (request.replay_safe && absl::IsUnavailable(error));
    if (!may_resend) return Round{Redact(error), false};
  }
  if (last.ok()) return Round{std::move(last), true};  // a leader failure: parsed by the caller
  const bool retry_later = !only_certificate_errors;
  if (count == 1) return Round{Redact(last.status()), retry_later};
  return Round{Redact(WithMessage(last.status(), absl::StrCat(last.status().message(), " (all ",
                                                              count, " servers failed)"))),
               retry_later};
}

int Client::AddReachabilityListener(std::function<void(bool reachable)> listener) {
  return reachability_listeners_.Add(std::move(listener));
}

void Client::RemoveReachabilityListener(int id) { reachability_listeners_.Remove(id); }

void Client::ReportOutcome(const absl::Status& status) {
  if (const std::optional<bool> reachable = ReachabilityOf(status); reachable.has_value()) {
    reachability_listeners_.Notify(*reachable);
  }
}

std::string Client::PreferredServer() const {
  return servers_[preferred_.load(std::memory_order_relaxed) % servers_.size()].base_url;
}

void Client::ReportServerFailure(absl::string_view base_url) {
  size_t current = preferred_.load(std::memory_order_relaxed) % servers_.size();
  if (servers_[current].base_url != base_url) return;
  preferred_.compare_exchange_strong(current, (current + 1) % servers_.size(),
                                     std::memory_order_relaxed);
}

template <typename Result, typename Parser>
absl::StatusOr<Result> Client::Call(absl::StatusOr<HttpRequest> request, Parser parse,
                                    Canceller* canceller) {
  if (!request.ok()) return request.status();
  absl::StatusOr<HttpResponse> response = Execute(*request, canceller);
  if (!response.ok()) {
    ReportOutcome(response.status());
    return response.status();
  }
  absl::StatusOr<Result> result = parse(*request, *response);
  ReportOutcome(result.status());
  if (!result.ok()) return Redact(result.status());
  return result;
}

absl::StatusOr<KvGetResult> Client::KvGet(absl::string_view key, const QueryOptions& query,
                                          Canceller* canceller) {
  return Call<KvGetResult>(BuildKvGetRequest(key, query), ParseKvGetResponse, canceller);
}

absl::StatusOr<KvGetRawResult> Client::KvGetRaw(absl::string_view key, const QueryOptions& query,
                                                Canceller* canceller) {
  return Call<KvGetRawResult>(BuildKvGetRawRequest(key, query), ParseKvGetRawResponse, canceller);
}

absl::StatusOr<KvListResult> Client::KvList(absl::string_view prefix, const QueryOptions& query,
                                            Canceller* canceller) {
  return Call<KvListResult>(BuildKvListRequest(prefix, query), ParseKvListResponse, canceller);
}

absl::StatusOr<KvKeysResult> Client::KvKeys(absl::string_view prefix, absl::string_view separator,
                                            const QueryOptions& query, Canceller* canceller) {
  return Call<KvKeysResult>(BuildKvKeysRequest(prefix, separator, query), ParseKvKeysResponse,
                            canceller);
}

absl::StatusOr<bool> Client::KvPut(absl::string_view key, absl::string_view value,
                                   const KvPutOptions& options, Canceller* canceller) {
  return Call<bool>(BuildKvPutRequest(key, value, options), ParseKvPutResponse, canceller);
}

absl::StatusOr<bool> Client::KvDelete(absl::string_view key, const KvDeleteOptions& options,
                                      Canceller* canceller) {
  return Call<bool>(BuildKvDeleteRequest(key, options), ParseKvDeleteResponse, canceller);
}

absl::StatusOr<std::string> Client::CreateSession(const SessionCreateOptions& options,
                                                  Canceller* canceller) {
  return Call<std::string>(BuildSessionCreateRequest(options), ParseSessionCreateResponse,
                           canceller);
}

absl::StatusOr<std::optional<SessionInfo>> Client::RenewSession(absl::string_view id,
                                                                Canceller* canceller) {
  return Call<std::optional<SessionInfo>>(BuildSessionRenewRequest(id), ParseSessionRenewResponse,
                                          canceller);
}

absl::Status Client::DestroySession(absl::string_view id, Canceller* canceller) {
  return Call<bool>(BuildSessionDestroyRequest(id), SuccessParser(ParseSessionDestroyResponse),
                    canceller)
      .status();
}

absl::StatusOr<SessionInfoResult> Client::GetSessionInfo(absl::string_view id,
                                                         const QueryOptions& query,
                                                         Canceller* canceller) {
  return Call<SessionInfoResult>(BuildSessionInfoRequest(id, query), ParseSessionInfoResponse,
                                 canceller);
}

absl::StatusOr<SessionListResult> Client::ListSessions(const QueryOptions& query,
                                                       Canceller* canceller) {
  return Call<SessionListResult>(BuildSessionListRequest(query), ParseSessionListResponse,
                                 canceller);
}

absl::StatusOr<TxnResult> Client::Txn(absl::Span<const TxnOp> ops, Canceller* canceller,
                                      Writers writers) {
  return Call<TxnResult>(BuildTxnRequest(ops, writers), ParseTxnResponse, canceller);
}

absl::StatusOr<std::string> Client::Leader(Canceller* canceller) {
  return Call<std::string>(BuildStatusLeaderRequest(), ParseStatusLeaderResponse, canceller);
}

absl::Status Client::RegisterNode(absl::string_view node, Canceller* canceller) {
  return Call<bool>(BuildCatalogRegisterRequest(node), SuccessParser(ParseCatalogRegisterResponse),
                    canceller)
      .status();
}

}  // namespace registry::consul

#include "registry/consul/client.h"

#include <algorithm>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "registry/consul/curl_transport.h"
#include "registry/consul/errors.h"
#include "registry/consul/status.h"
#include "registry/status_macros.h"

namespace registry::consul {
namespace {

absl::Status WithMessage(const absl::Status& status, absl::string_view message) {
  absl::Status copy(status.code(), message);
  status.ForEachPayload(
      [&copy](absl::string_view url, const absl::Cord& payload) { copy.SetPayload(url, payload); });
  return copy;
}

// A request cut, or never sent, because its canceller's deadline passed.
absl::Status CallerDeadlineError(const HttpRequest& request, absl::string_view detail) {
  return absl::DeadlineExceededError(
      absl::StrCat(RequestLabel(request), ": the caller's deadline passed (", detail, ")"));
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
    : options_(std::move(options)),
      servers_(std::move(servers)),
      transport_(std::move(transport)) {}

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
  const absl::Duration timeout = request.timeout;
  const absl::Time deadline = canceller != nullptr ? canceller->deadline() : absl::InfiniteFuture();
  const size_t count = servers_.size();
  const size_t first = preferred_.load(std::memory_order_relaxed) % count;
  for (size_t attempt = 0; attempt < count; ++attempt) {
    const size_t index = (first + attempt) % count;
    const bool last_attempt = attempt + 1 == count;
    request.server = servers_[index].base_url;
    // A caller's deadline cuts the exchange: nothing may outlive the call that made it.
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return NotSent(CallerDeadlineError(request, "before it was sent"));
    }
    // Rounded up: the transport counts whole milliseconds, and must not give up before it.
    request.timeout = std::min(timeout, absl::Ceil(left, absl::Milliseconds(1)));
    absl::StatusOr<HttpResponse> response = transport_->Execute(request, canceller);
    if (!response.ok() && !absl::IsCancelled(response.status()) && absl::Now() >= deadline) {
      return CallerDeadlineError(request, Redact(response.status()).message());
    }
    if (response.ok()) {
      // A leaderless server may be partitioned away; another one may know the leader. The last
      // server's answer is returned as is and parsed into Unavailable.
      if (IsNoLeaderResponse(*response) && !last_attempt) continue;
      if (!IsNoLeaderResponse(*response)) preferred_.store(index, std::memory_order_relaxed);
      return response;
    }
    const absl::Status& error = response.status();
    bool retry = IsConnectionError(error) ||
                 (request.method == HttpMethod::kGet && absl::IsUnavailable(error));
    if (absl::IsCancelled(error) || !retry) return Redact(error);
    if (last_attempt) {
      if (count == 1) return Redact(error);
      return Redact(
          WithMessage(error, absl::StrCat(error.message(), " (all ", count, " servers failed)")));
    }
  }
  return absl::InternalError("unreachable");  // the loop returns on its last attempt
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
  if (!response.ok()) return response.status();
  absl::StatusOr<Result> result = parse(*request, *response);
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
  auto parse = [](const HttpRequest& request,
                  const HttpResponse& response) -> absl::StatusOr<bool> {
    RETURN_IF_ERROR(ParseSessionDestroyResponse(request, response));
    return true;
  };
  return Call<bool>(BuildSessionDestroyRequest(id), parse, canceller).status();
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

absl::StatusOr<TxnResult> Client::Txn(absl::Span<const TxnOp> ops, Canceller* canceller) {
  return Call<TxnResult>(BuildTxnRequest(ops), ParseTxnResponse, canceller);
}

absl::StatusOr<std::string> Client::Leader(Canceller* canceller) {
  return Call<std::string>(BuildStatusLeaderRequest(), ParseStatusLeaderResponse, canceller);
}

}  // namespace registry::consul

// SPDX-License-Identifier: Apache-2.0
// consul/client.h
//
// Client is the Consul HTTP facade: it builds a request (kv.h, session.h, txn.h, status.h),
// adds the client-wide parts (ACL token header, datacenter, timeout), sends it with failover
// across the configured servers, and parses the response.
//
// Failover and retries: a call tries the servers in turn, starting with the last one that
// answered. It moves on when a server cannot be reached (any request), when a replay-safe
// request (HttpRequest::replay_safe: reads, renewals, acquires and releases, and writes of keys
// that only their caller writes; never a plain write of a shared key) fails without a response
// (timeout, reset), and on a leader failure (errors.h LeaderFailure: "No cluster leader", "rpc
// error getting client", ...) except a possibly applied one of a request that is not replay-safe,
// which is answered (Unavailable, outcome unknown) for its caller to resolve. A replay-safe
// request that is not a blocking read gives each server an equal share of its timeout (at least
// kMinServerShare), so that one server holding requests cannot fail the call while another would
// answer. When every server
// failed in one of these ways, the round is made again after a jittered back-off (kFirstRetryDelay
// doubling up to kMaxRetryDelay), until the request's timeout has passed since the call began or
// the caller's deadline comes: a leader election shorter than the request timeout costs a caller
// nothing but time. A blocking read gets one round (its caller loops over blocking reads). Any
// other answer (403, 404, other 500s ...) is final. Cancellation is never retried, and cuts a
// back-off short.
//
// Errors follow errors.h; the ACL token never appears in any status message.
//
// Thread safety: all methods may be called concurrently from any thread.
#ifndef CONSUL_CLIENT_H_
#define CONSUL_CLIENT_H_

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "base/listener_registry.h"
#include "consul/canceller.h"
#include "consul/catalog.h"
#include "consul/client_options.h"
#include "consul/http_types.h"
#include "consul/kv.h"
#include "consul/query.h"
#include "consul/server_list.h"
#include "consul/session.h"
#include "consul/transport.h"
#include "consul/txn.h"

namespace registry::consul {

// Back-off between rounds over every server (client.h: Failover and retries).
inline constexpr absl::Duration kFirstRetryDelay = absl::Milliseconds(50);
inline constexpr absl::Duration kMaxRetryDelay = absl::Seconds(1);
// The least time one server gets of a request that moves on after a timeout (client.h).
inline constexpr absl::Duration kMinServerShare = absl::Milliseconds(500);

class Client {
 public:
  // A client using libcurl (CurlTransport). Errors: InvalidArgument from ValidateClientOptions.
  static absl::StatusOr<std::unique_ptr<Client>> Create(ClientOptions options);
  // A client using `transport` (e.g. a mock).
  static absl::StatusOr<std::unique_ptr<Client>> Create(ClientOptions options,
                                                        std::shared_ptr<Transport> transport);

  // The token is redacted from every log record (base/log.h) while the client exists.
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Every call below accepts an optional `canceller`: Cancel() makes it return Cancelled
  // promptly, and a call made with an already cancelled one fails without I/O. A canceller with
  // a deadline bounds the call: it returns DeadlineExceeded by then (a write cut that way may
  // or may not have been applied), and is not sent at all once the deadline has passed.

  // The entry at `key`; entry == nullopt when absent (not an error).
  absl::StatusOr<KvGetResult> KvGet(absl::string_view key, const QueryOptions& query = {},
                                    Canceller* canceller = nullptr);
  // The raw value at `key`; value == nullopt when absent.
  absl::StatusOr<KvGetRawResult> KvGetRaw(absl::string_view key, const QueryOptions& query = {},
                                          Canceller* canceller = nullptr);
  // Every entry under `prefix` ("" = all).
  absl::StatusOr<KvListResult> KvList(absl::string_view prefix, const QueryOptions& query = {},
                                      Canceller* canceller = nullptr);
  // Keys under `prefix`, cut after `separator` when it is non-empty.
  absl::StatusOr<KvKeysResult> KvKeys(absl::string_view prefix, absl::string_view separator = "",
                                      const QueryOptions& query = {},
                                      Canceller* canceller = nullptr);
  // Writes `value`; false when a cas/acquire/release did not apply.
  absl::StatusOr<bool> KvPut(absl::string_view key, absl::string_view value,
                             const KvPutOptions& options = {}, Canceller* canceller = nullptr);
  // Deletes `key` (or the subtree with recurse); false when a cas delete did not apply.
  absl::StatusOr<bool> KvDelete(absl::string_view key, const KvDeleteOptions& options = {},
                                Canceller* canceller = nullptr);

  // Creates a session and returns its id.
  absl::StatusOr<std::string> CreateSession(const SessionCreateOptions& options,
                                            Canceller* canceller = nullptr);
  // Renews `id`; nullopt when the session no longer exists (create a new one).
  absl::StatusOr<std::optional<SessionInfo>> RenewSession(absl::string_view id,
                                                          Canceller* canceller = nullptr);
  // Destroys `id` (releasing or deleting its keys). OK also for an unknown id.
  absl::Status DestroySession(absl::string_view id, Canceller* canceller = nullptr);
  // The session `id`; session == nullopt when it does not exist.
  absl::StatusOr<SessionInfoResult> GetSessionInfo(absl::string_view id,
                                                   const QueryOptions& query = {},
                                                   Canceller* canceller = nullptr);
  absl::StatusOr<SessionListResult> ListSessions(const QueryOptions& query = {},
                                                 Canceller* canceller = nullptr);

  // Runs `ops` atomically; a rolled-back transaction is a result with committed == false.
  // `writers` says whether a lost reply may be answered by sending `ops` again (txn.h: Writers).
  absl::StatusOr<TxnResult> Txn(absl::Span<const TxnOp> ops, Canceller* canceller = nullptr,
                                Writers writers = Writers::kShared);

  // The leader's address, "" when the cluster has none.
  absl::StatusOr<std::string> Leader(Canceller* canceller = nullptr);
  // Registers `node` as an external node of the catalog (catalog.h).
  absl::Status RegisterNode(absl::string_view node, Canceller* canceller = nullptr);

  // Sends an already built request (server left empty) with the client-wide parts and failover,
  // returning the raw response of the server that answered (any HTTP status). Errors: Cancelled,
  // Unavailable when no server answered (the last server's error).
  absl::StatusOr<HttpResponse> Execute(HttpRequest request, Canceller* canceller = nullptr);

  // The configured servers, in order.
  const std::vector<ServerAddress>& servers() const { return servers_; }
  // Base URL of the server the next call tries first (the last one that answered).
  std::string PreferredServer() const;
  const ClientOptions& options() const { return options_; }

  // Replaces every occurrence of the ACL token in `status`'s message (defence in depth).
  absl::Status Redact(absl::Status status) const;

  // Reachability: every listener hears, on the calling thread, what each call's outcome says of
  // the store (ReachabilityOf: true, Consul answered; false, it could not be reached or had no
  // leader; nothing when the outcome says neither), and what the exchanges driven outside the
  // client report (ClientExchanges::Complete); also `false` as soon as every server failed one
  // round of a call that goes on retrying, so that a call riding out an election does not hide
  // the outage until it ends. A listener must return quickly and make no call of this client.
  // Remove() returns once the listener is not running (base/listener_registry.h).
  int AddReachabilityListener(std::function<void(bool reachable)> listener);
  void RemoveReachabilityListener(int id);

 private:
  friend class ClientExchanges;  // an exchange driven outside reports through these two

  // Tells the client that `base_url` failed: if it is the preferred server, the next one
  // becomes preferred.
  void ReportServerFailure(absl::string_view base_url);
  // Tells the reachability listeners what `status` says of the store.
  void ReportOutcome(const absl::Status& status);

  Client(ClientOptions options, std::vector<ServerAddress> servers,
         std::shared_ptr<Transport> transport);

  // One pass over the servers, starting with the preferred one.
  struct Round {
    absl::StatusOr<HttpResponse> result;  // the answer, or the last server's failure
    bool retry_later;                     // every server failed in a way that may soon pass
    bool cut = false;                     // the caller's deadline ended it (CallerDeadlineError)
  };
  Round TryEveryServer(HttpRequest request, absl::Time deadline, Canceller* canceller);

  template <typename Result, typename Parser>
  absl::StatusOr<Result> Call(absl::StatusOr<HttpRequest> request, Parser parse,
                              Canceller* canceller);

  const ClientOptions options_;
  const std::vector<ServerAddress> servers_;  // never empty
  const std::shared_ptr<Transport> transport_;
  ListenerRegistry<bool> reachability_listeners_{"reachability listener"};
  std::atomic<size_t> preferred_{0};  // index into servers_
};

}  // namespace registry::consul

#endif  // CONSUL_CLIENT_H_

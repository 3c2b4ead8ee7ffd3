// SPDX-License-Identifier: Apache-2.0
// consul/transport.h
//
// Transport sends one HttpRequest to the server named in request.server and returns whatever
// HTTP response came back. It knows nothing about Consul semantics: every HTTP status, 5xx
// included, is a successful Execute(); only failures to obtain a response are errors. Tests mock
// it with gmock (see tests/consul/mock_transport.h); CurlTransport is the real one.
//
// Thread safety: implementations must allow concurrent Execute() calls from many threads.
#ifndef CONSUL_TRANSPORT_H_
#define CONSUL_TRANSPORT_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "consul/canceller.h"
#include "consul/http_types.h"

namespace registry::consul {

class Transport {
 public:
  virtual ~Transport() = default;

  // Performs `request` (request.server must be set) within request.timeout (zero: no limit).
  // Returns the response for any HTTP status. Errors:
  //  - Cancelled if `canceller` (may be null) is or becomes cancelled; a request started after
  //    Cancel() fails at once without any I/O;
  //  - Unavailable when no complete response arrived (connect failure, timeout, reset, truncated
  //    body). When the request certainly never reached a server (connection refused, unknown
  //    host, TLS handshake failure) the status is built by ConnectionError(), so a client may
  //    retry even a non-idempotent request elsewhere.
  // Messages start with RequestLabel(request) and never contain header values.
  virtual absl::StatusOr<HttpResponse> Execute(const HttpRequest& request,
                                               Canceller* canceller) = 0;
};

// `status` marked as "the request was never sent": whatever it would have written was not.
absl::Status NotSent(absl::Status status);
// True for statuses marked by NotSent().
bool IsNotSent(const absl::Status& status);

// An Unavailable status marked as "the request was never sent" (see IsConnectionError).
absl::Status ConnectionError(absl::string_view message);

// True for Unavailable statuses marked by NotSent(): no server could be reached (another server
// may be tried).
bool IsConnectionError(const absl::Status& status);

// True when a write that failed with `status` may nonetheless have been applied: Unavailable
// other than a connection error (the reply was lost or timed out, or a 502/503/504), and any
// other 5xx answer (Internal; Consul answers 500 for a raft apply that times out and lands
// later). Not for an invalid session (FailedPrecondition) or any 4xx. A caller that must
// know re-reads what the write would have changed.
bool IsUnknownOutcome(const absl::Status& status);

// The budget of one call for writes whose outcome is unknown: each one the caller may make again
// (after a fresh read, or as is when the write is safe to repeat), up to `max_retries`, then the
// last one's error is the caller's answer.
class UnknownOutcomes {
 public:
  UnknownOutcomes(const Canceller& canceller, int max_retries)
      : canceller_(canceller), max_retries_(max_retries) {}

  // True if the write that failed with `status` is to be made again; false for a definite
  // failure, a cancelled call, or one unknown outcome too many (`status` is then the answer).
  bool Retry(const absl::Status& status) {
    if (!IsUnknownOutcome(status) || canceller_.IsCancelled() || retries_ >= max_retries_) {
      return false;
    }
    ++retries_;
    last_ = status;
    return true;
  }
  // The last unknown outcome retried, or OK if there was none.
  const absl::Status& last() const { return last_; }

 private:
  const Canceller& canceller_;
  const int max_retries_;
  int retries_ = 0;
  absl::Status last_;
};

}  // namespace registry::consul

#endif  // CONSUL_TRANSPORT_H_

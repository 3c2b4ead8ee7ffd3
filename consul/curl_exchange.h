// SPDX-License-Identifier: Apache-2.0
// consul/curl_exchange.h
//
// CurlExchange turns one HttpRequest into a configured libcurl easy handle and the finished
// transfer back into an HttpResponse or a status. CurlTransport drives it on a private multi
// handle; code running many requests on its own curl multi handle (e.g. a watch engine) uses
// the same class, so every transfer gets identical options, header handling and error mapping.
//
// Error mapping in Finish(): Unavailable for every failure to obtain a complete response
// (timeouts, resets, truncated bodies); ConnectionError() (transport.h) when nothing was sent
// (refused, unresolvable host, TLS handshake failure); CertificateError() (tls_errors.h), in
// the user's words, when a certificate is rejected by either side; InvalidArgument for a
// malformed URL; ResourceExhausted for an answer larger than CurlOptions::max_response_bytes.
// Messages start with RequestLabel(request), name the server, and never contain header values.
//
// Thread safety: an exchange is used by one thread at a time; distinct exchanges are
// independent.
#ifndef CONSUL_CURL_EXCHANGE_H_
#define CONSUL_CURL_EXCHANGE_H_

#include <curl/curl.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "base/limits.h"
#include "consul/client_options.h"
#include "consul/http_types.h"

namespace registry::consul {

struct CurlOptions {
  absl::Duration connect_timeout = absl::Seconds(5);
  bool verify_tls = true;     // verify the server certificate and host name for https
  std::string ca_file{};      // CA bundle for https; empty = the system default
  std::string cert_file{};    // client certificate (PEM) for https; empty = none
  std::string key_file{};     // its private key (PEM)
  std::string server_name{};  // https: name to verify and send as SNI instead of the host
  // The most an answer may hold, headers and body: beyond it the transfer is cut (Finish():
  // ResourceExhausted), so a server sending without end costs at most this much memory.
  size_t max_response_bytes = limits::kDefaultMaxResponseBytes;
};

// The curl settings implied by `options`.
CurlOptions CurlOptionsFrom(const ClientOptions& options);

// Calls curl_global_init once per process (thread-safe); every user of libcurl here calls it
// before creating handles.
void EnsureCurlInitialized();

class CurlExchange {
 public:
  // Resets `easy` (keeping its connection cache) and configures it to perform `request`
  // (request.server set; request.timeout bounds the whole transfer, zero = no limit). `easy`
  // must outlive the exchange, and the exchange must be destroyed only once `easy` is no longer
  // transferring (finished, or removed from its multi handle). The previous exchange of `easy`
  // may outlive this call: its destruction then leaves `easy` (configured for this one) alone.
  // Errors: InvalidArgument for a header
  // containing a line break (named, value not shown); ResourceExhausted if libcurl cannot allocate.
  static absl::StatusOr<std::unique_ptr<CurlExchange>> Start(CURL* easy, HttpRequest request,
                                                             const CurlOptions& options);
  ~CurlExchange();
  CurlExchange(const CurlExchange&) = delete;
  CurlExchange& operator=(const CurlExchange&) = delete;

  CURL* easy() const { return easy_; }
  const HttpRequest& request() const { return request_; }

  // Returns the response of the transfer that completed with `result` (as reported by
  // curl_multi_info_read or curl_easy_perform), or the mapped error. Call once.
  absl::StatusOr<HttpResponse> Finish(CURLcode result);

 private:
  CurlExchange(CURL* easy, HttpRequest request, const CurlOptions& options);

  // For options.server_name: the URL names it, and CURLOPT_CONNECT_TO sends the connection to
  // the real server, so SNI and the certificate check use the name while the TCP connection
  // goes to the address in server-lists.
  absl::Status RedirectToServerName();
  // The status of a transfer that failed with `result` after sending `request_bytes`: a
  // CertificateError in the user's words, else one whose message is `detail`.
  absl::Status TlsAwareError(CURLcode result, absl::string_view detail, long request_bytes) const;

  // CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION; `user` is the exchange.
  static size_t OnBody(char* data, size_t size, size_t count, void* user);
  static size_t OnHeader(char* data, size_t size, size_t count, void* user);
  // Counts `bytes` more of the answer against options_.max_response_bytes; false (and the
  // transfer is to be cut) once the answer would outgrow it.
  bool Admit(size_t bytes);
  // CURLOPT_READFUNCTION and CURLOPT_SEEKFUNCTION of a request that is not replay_safe: the body
  // is handed over from request_.body, and libcurl's rewind before a silent resend (a reused
  // connection that closed before any reply byte) is refused once any of it was handed over,
  // so that the request is never sent twice (HttpRequest::replay_safe).
  static size_t OnUpload(char* buffer, size_t size, size_t count, void* user);
  static int OnRewind(void* user, curl_off_t offset, int origin);

  CURL* const easy_;
  const HttpRequest request_;  // owns the body and URL curl points into
  const CurlOptions options_;
  std::string url_;
  std::string checked_name_;  // the name the server certificate is checked against
  curl_slist* headers_ = nullptr;
  curl_slist* connect_to_ = nullptr;
  HttpResponse response_;
  size_t response_bytes_ = 0;    // of the answer so far, headers and body
  bool too_large_ = false;       // the answer outgrew options_.max_response_bytes
  size_t uploaded_ = 0;          // bytes of request_.body handed to libcurl (OnUpload)
  bool resend_refused_ = false;  // OnRewind refused libcurl's resend: the request went out once
  char error_buffer_[CURL_ERROR_SIZE] = {0};
};

}  // namespace registry::consul

#endif  // CONSUL_CURL_EXCHANGE_H_

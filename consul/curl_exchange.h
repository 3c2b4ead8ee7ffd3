// consul/curl_exchange.h
//
// CurlExchange turns one HttpRequest into a configured libcurl easy handle and the finished
// transfer back into an HttpResponse or a status. CurlTransport drives it on a private multi
// handle; code running many requests on its own curl multi handle (e.g. a watch engine) uses
// the same class, so every transfer gets identical options, header handling and error mapping.
//
// Error mapping in Finish(): Unavailable for every failure to obtain a complete response
// (timeouts, resets, truncated bodies); ConnectionError() (transport.h) when nothing was sent
// (refused, unresolvable host, TLS handshake failure); InvalidArgument for a malformed URL.
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
#include "consul/client_options.h"
#include "consul/http_types.h"

namespace registry::consul {

struct CurlOptions {
  absl::Duration connect_timeout = absl::Seconds(5);
  bool verify_tls = true;  // verify the server certificate and host name for https
  std::string ca_file{};   // CA bundle for https; empty = the system default
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
  CurlExchange(CURL* easy, HttpRequest request);

  // CURLOPT_WRITEFUNCTION; `user` is the exchange.
  static size_t OnBody(char* data, size_t size, size_t count, void* user);

  CURL* const easy_;
  const HttpRequest request_;  // owns the body and URL curl points into
  const std::string url_;
  curl_slist* headers_ = nullptr;
  HttpResponse response_;
  char error_buffer_[CURL_ERROR_SIZE] = {0};
};

}  // namespace registry::consul

#endif  // CONSUL_CURL_EXCHANGE_H_

// SPDX-License-Identifier: Apache-2.0
#include "consul/curl_exchange.h"

#include <sys/socket.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "consul/tls_errors.h"
#include "consul/transport.h"
#include "consul/url.h"

namespace registry::consul {
namespace {

// The most a body is pre-sized to from its Content-Length; beyond it the string just grows.
constexpr curl_off_t kMaxBodyReserve = 64 << 20;

// The exchange each easy handle is configured for: the last one started on it.
absl::Mutex owners_mu(absl::kConstInit);
absl::flat_hash_map<CURL*, const CurlExchange*>& Owners() ABSL_EXCLUSIVE_LOCKS_REQUIRED(owners_mu) {
  static auto* owners = new absl::flat_hash_map<CURL*, const CurlExchange*>();
  return *owners;
}

void TakeOwnership(CURL* easy, const CurlExchange* exchange) {
  absl::MutexLock lock(&owners_mu);
  Owners()[easy] = exchange;
}

// True (and forgotten) if `exchange` is the one `easy` is configured for.
bool ReleaseOwnership(CURL* easy, const CurlExchange* exchange) {
  absl::MutexLock lock(&owners_mu);
  auto it = Owners().find(easy);
  if (it == Owners().end() || it->second != exchange) return false;
  Owners().erase(it);
  return true;
}

// CURLOPT_OPENSOCKETFUNCTION: every socket close-on-exec from its creation, so that a program a
// host starts (registryctl lock -- CMD) does not inherit connections to Consul, which would keep
// them open past the host's own end. Created so atomically: a fork may happen on another thread.
curl_socket_t OpenCloseOnExecSocket(void* /*unused*/, curlsocktype /*purpose*/,
                                    struct curl_sockaddr* address) {
  return socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

long ToMillis(absl::Duration duration) {
  int64_t ms = absl::ToInt64Milliseconds(duration);
  if (duration > absl::ZeroDuration() && ms == 0) ms = 1;
  return static_cast<long>(ms);
}

// "127.0.0.1" of "https://127.0.0.1:8501"; the name libcurl checks the certificate against.
std::string HostOf(absl::string_view base_url) {
  if (!absl::ConsumePrefix(&base_url, "https://")) absl::ConsumePrefix(&base_url, "http://");
  const size_t colon = base_url.rfind(':');
  absl::string_view host = base_url.substr(0, colon);
  absl::ConsumePrefix(&host, "[");
  absl::ConsumeSuffix(&host, "]");
  return std::string(host);
}

bool HasLineBreak(absl::string_view text) {
  return absl::StrContains(text, '\r') || absl::StrContains(text, '\n') ||
         absl::StrContains(text, '\0');
}

}  // namespace

CurlOptions CurlOptionsFrom(const ClientOptions& options) {
  CurlOptions curl;
  curl.connect_timeout = options.connect_timeout;
  curl.verify_tls = options.verify_tls;
  curl.ca_file = options.ca_file;
  curl.cert_file = options.cert_file;
  curl.key_file = options.key_file;
  curl.server_name = options.server_name;
  curl.max_response_bytes = options.max_response_bytes;
  return curl;
}

void EnsureCurlInitialized() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

CurlExchange::CurlExchange(CURL* easy, HttpRequest request, const CurlOptions& options)
    : easy_(easy),
      request_(std::move(request)),
      options_(options),
      url_(BuildUrl(request_)),
      checked_name_(HostOf(request_.server)) {}

absl::Status CurlExchange::RedirectToServerName() {
  if (options_.server_name.empty() || !absl::StartsWith(request_.server, "https://")) {
    return absl::OkStatus();
  }
  // request_.server is a base URL "https://host:port" (server_list.h), host in brackets if IPv6.
  absl::string_view address = absl::string_view(request_.server).substr(8);
  const size_t colon = address.rfind(':');
  if (colon == absl::string_view::npos) return absl::OkStatus();
  absl::string_view host = address.substr(0, colon);
  absl::string_view port = address.substr(colon + 1);
  HttpRequest renamed = request_;
  renamed.server = absl::StrCat("https://", options_.server_name, ":", port);
  url_ = BuildUrl(renamed);
  checked_name_ = options_.server_name;
  connect_to_ = curl_slist_append(
      nullptr, absl::StrCat(options_.server_name, ":", port, ":", host, ":", port).c_str());
  if (connect_to_ == nullptr) {
    return absl::ResourceExhaustedError(absl::StrCat(RequestLabel(request_), ": no memory"));
  }
  return absl::OkStatus();
}

bool CurlExchange::Admit(size_t bytes) {
  // response_bytes_ never exceeds the limit: only admitted bytes are counted.
  if (bytes > options_.max_response_bytes - response_bytes_) {
    too_large_ = true;
    return false;
  }
  response_bytes_ += bytes;
  return true;
}

size_t CurlExchange::OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* exchange = static_cast<CurlExchange*>(user);
  if (!exchange->Admit(size * count)) return 0;  // curl ends the transfer: CURLE_WRITE_ERROR
  HeaderList& headers = exchange->response_.headers;
  absl::string_view line(data, size * count);
  if (absl::StartsWith(line, "HTTP/")) {
    headers.clear();  // a new response (e.g. after "100 Continue"): keep only the final one
    return size * count;
  }
  size_t colon = line.find(':');
  if (colon != absl::string_view::npos) {
    headers.emplace_back(std::string(absl::StripAsciiWhitespace(line.substr(0, colon))),
                         std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
  }
  return size * count;
}

size_t CurlExchange::OnUpload(char* buffer, size_t size, size_t count, void* user) {
  auto* self = static_cast<CurlExchange*>(user);
  const std::string& body = self->request_.body;
  const size_t n = std::min(size * count, body.size() - self->uploaded_);
  std::memcpy(buffer, body.data() + self->uploaded_, n);
  self->uploaded_ += n;
  return n;
}

int CurlExchange::OnRewind(void* user, curl_off_t offset, int origin) {
  auto* self = static_cast<CurlExchange*>(user);
  // Nothing handed over yet: nothing of the body can have reached the server, which does not
  // act on a request it has not read whole.
  if (self->uploaded_ == 0 && offset == 0 && origin == SEEK_SET) return CURL_SEEKFUNC_OK;
  self->resend_refused_ = true;
  return CURL_SEEKFUNC_FAIL;
}

size_t CurlExchange::OnBody(char* data, size_t size, size_t count, void* user) {
  auto* exchange = static_cast<CurlExchange*>(user);
  if (!exchange->Admit(size * count)) return 0;  // curl ends the transfer: CURLE_WRITE_ERROR
  std::string& body = exchange->response_.body;
  if (body.empty()) {
    // A watch answer can be megabytes arriving in 16 KiB pieces: size the body once instead
    // of copying it at every doubling.
    curl_off_t length = -1;
    if (curl_easy_getinfo(exchange->easy_, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length) ==
            CURLE_OK &&
        length > 0 && length <= kMaxBodyReserve &&
        static_cast<size_t>(length) <= exchange->options_.max_response_bytes) {
      body.reserve(static_cast<size_t>(length));
    }
  }
  body.append(data, size * count);
  return size * count;
}

CurlExchange::~CurlExchange() {
  // Detach everything that points into this object before it goes away, unless a newer exchange
  // has configured the handle since: clearing its headers would send its request without them
  // (a blocking re-poll without its ACL token).
  if (ReleaseOwnership(easy_, this)) {
    curl_easy_setopt(easy_, CURLOPT_HTTPHEADER, nullptr);
    curl_easy_setopt(easy_, CURLOPT_ERRORBUFFER, nullptr);
    curl_easy_setopt(easy_, CURLOPT_CONNECT_TO, nullptr);
  }
  curl_slist_free_all(headers_);
  curl_slist_free_all(connect_to_);
}

absl::StatusOr<std::unique_ptr<CurlExchange>> CurlExchange::Start(CURL* easy, HttpRequest request,
                                                                  const CurlOptions& options) {
  const std::string label = RequestLabel(request);
  for (const auto& [name, value] : request.headers) {
    if (HasLineBreak(name) || HasLineBreak(value)) {
      return absl::InvalidArgumentError(
          absl::StrCat(label, ": header '", absl::CHexEscape(name), "' contains a line break"));
    }
  }
  std::unique_ptr<CurlExchange> exchange(new CurlExchange(easy, std::move(request), options));
  if (absl::Status status = exchange->RedirectToServerName(); !status.ok()) return status;
  const HttpRequest& req = exchange->request_;
  for (const auto& [name, value] : req.headers) {
    curl_slist* grown =
        curl_slist_append(exchange->headers_, absl::StrCat(name, ": ", value).c_str());
    if (grown == nullptr) return absl::ResourceExhaustedError(absl::StrCat(label, ": no memory"));
    exchange->headers_ = grown;
  }
  // Consul never answers "100 Continue"; waiting for it would only add a round trip.
  curl_slist* grown = curl_slist_append(exchange->headers_, "Expect:");
  if (grown == nullptr) return absl::ResourceExhaustedError(absl::StrCat(label, ": no memory"));
  exchange->headers_ = grown;

  TakeOwnership(easy, exchange.get());
  curl_easy_reset(easy);  // keeps live connections (and the multi handle's cache)
  curl_easy_setopt(easy, CURLOPT_URL, exchange->url_.c_str());
  curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_PATH_AS_IS, 1L);  // keys like "a/../b" must reach Consul as-is
  curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(easy, CURLOPT_OPENSOCKETFUNCTION, OpenCloseOnExecSocket);
  curl_easy_setopt(easy, CURLOPT_HTTPHEADER, exchange->headers_);
  curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, exchange->error_buffer_);
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, exchange.get());
  curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(easy, CURLOPT_HEADERDATA, exchange.get());
  curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, ToMillis(options.connect_timeout));
  curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, ToMillis(req.timeout));
  curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, options.verify_tls ? 1L : 0L);
  curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, options.verify_tls ? 2L : 0L);
  if (!options.ca_file.empty()) curl_easy_setopt(easy, CURLOPT_CAINFO, options.ca_file.c_str());
  if (!options.cert_file.empty()) {
    curl_easy_setopt(easy, CURLOPT_SSLCERT, options.cert_file.c_str());
    curl_easy_setopt(easy, CURLOPT_SSLKEY, options.key_file.c_str());
  }
  if (exchange->connect_to_ != nullptr) {
    curl_easy_setopt(easy, CURLOPT_CONNECT_TO, exchange->connect_to_);
  }
  // libcurl silently resends a request whose reused connection closed before any reply byte
  // (see HttpRequest::replay_safe). One that must not be sent twice keeps the kept-alive
  // connection when it has a body whose rewind can be refused (OnRewind); else it takes a new
  // connection, where no resend happens.
  const bool guard_body = !req.replay_safe && !req.body.empty();
  if (!req.replay_safe && !guard_body) curl_easy_setopt(easy, CURLOPT_FRESH_CONNECT, 1L);
  switch (req.method) {
    case HttpMethod::kGet:
      curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
      break;
    case HttpMethod::kPut:
      curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
      if (guard_body) {
        curl_easy_setopt(easy, CURLOPT_POST, 1L);
        curl_easy_setopt(easy, CURLOPT_READFUNCTION, OnUpload);
        curl_easy_setopt(easy, CURLOPT_READDATA, exchange.get());
        curl_easy_setopt(easy, CURLOPT_SEEKFUNCTION, OnRewind);
        curl_easy_setopt(easy, CURLOPT_SEEKDATA, exchange.get());
      } else {
        curl_easy_setopt(easy, CURLOPT_POSTFIELDS, req.body.data());
      }
      curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, "PUT");
      break;
    case HttpMethod::kDelete:
      curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, "DELETE");
      break;
  }
  return exchange;
}

absl::StatusOr<HttpResponse> CurlExchange::Finish(CURLcode result) {
  if (result == CURLE_OK) {
    long status = 0;
    curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &status);
    response_.status = static_cast<int>(status);
    return std::move(response_);
  }
  if (too_large_) {  // cut by Admit(): curl's own words would only say "write error"
    return absl::ResourceExhaustedError(
        absl::StrCat(RequestLabel(request_), ": ", request_.server, ": the answer is larger than ",
                     options_.max_response_bytes,
                     " bytes, the most one answer may hold (cut after ", response_bytes_, ")"));
  }
  long request_bytes = 0;
  curl_easy_getinfo(easy_, CURLINFO_REQUEST_SIZE, &request_bytes);
  // A body handed over counts as sent: when the reused connection it went out on closed, libcurl
  // reconnects before it rewinds (OnRewind), so a failed reconnect ends the transfer with a
  // connection error although the request went out once.
  if (uploaded_ > 0) request_bytes = std::max(request_bytes, static_cast<long>(uploaded_));
  std::string detail =
      absl::StrCat(RequestLabel(request_), ": ", request_.server, ": ", curl_easy_strerror(result));
  if (error_buffer_[0] != '\0') absl::StrAppend(&detail, " (", error_buffer_, ")");
  if (resend_refused_) {
    return absl::UnavailableError(absl::StrCat(
        RequestLabel(request_), ": ", request_.server,
        ": the connection closed after the request was sent, before any reply (not sent again: "
        "outcome unknown)"));
  }
  switch (result) {
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return absl::InvalidArgumentError(detail);
    case CURLE_OUT_OF_MEMORY:
      return absl::ResourceExhaustedError(detail);
    case CURLE_PARTIAL_FILE:
      return absl::UnavailableError(absl::StrCat(detail, " [response truncated]"));
    case CURLE_OPERATION_TIMEDOUT:
      if (request_bytes == 0) return ConnectionError(detail);
      return absl::UnavailableError(
          absl::StrCat(detail, " [timeout ", absl::FormatDuration(request_.timeout), "]"));
    default:
      return TlsAwareError(result, detail, request_bytes);
  }
}

absl::Status CurlExchange::TlsAwareError(CURLcode result, absl::string_view detail,
                                         long request_bytes) const {
  const TlsContext tls = {options_.ca_file, !options_.cert_file.empty(), options_.cert_file,
                          checked_name_};
  std::optional<std::string> problem = ExplainCertificateFailure(result, error_buffer_, tls);
  if (problem.has_value()) {
    // A certificate is checked before any request byte is processed (with TLS 1.3 the server's
    // refusal arrives only after curl has written the request, which the server never read).
    const char* why = error_buffer_[0] != '\0' ? error_buffer_ : curl_easy_strerror(result);
    return CertificateError(absl::StrCat(RequestLabel(request_), ": ", request_.server, ": ",
                                         *problem, " (", why, ")"));
  }
  // Nothing sent yet (refused, unresolvable, TLS handshake): safe to retry elsewhere.
  if (request_bytes == 0) return ConnectionError(detail);
  return absl::UnavailableError(detail);
}

}  // namespace registry::consul

// SPDX-License-Identifier: Apache-2.0
#include "tests/devserver/test_http_client.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "absl/strings/ascii.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace registry::devserver::testing {
namespace {

size_t CollectBody(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

size_t CollectHeader(char* data, size_t size, size_t count, void* out) {
  std::string line(data, size * count);
  const size_t colon = line.find(':');
  if (colon != std::string::npos) {
    std::string name = absl::AsciiStrToLower(line.substr(0, colon));
    std::string value(absl::StripAsciiWhitespace(line.substr(colon + 1)));
    (*static_cast<std::map<std::string, std::string>*>(out))[name] = value;
  }
  return size * count;
}

}  // namespace

std::string TestResponse::Header(const std::string& lower_name) const {
  auto it = headers.find(lower_name);
  return it == headers.end() ? "" : it->second;
}

nlohmann::json TestResponse::Json() const {
  return nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
}

TestHttpClient::TestHttpClient(std::string base, absl::Duration timeout)
    : base_(std::move(base)), timeout_(timeout), curl_(curl_easy_init()) {}

TestHttpClient::~TestHttpClient() { curl_easy_cleanup(static_cast<CURL*>(curl_)); }

TestResponse TestHttpClient::Get(const std::string& path) { return Do("GET", path); }

TestResponse TestHttpClient::Put(const std::string& path, const std::string& body) {
  return Do("PUT", path, body);
}

TestResponse TestHttpClient::Delete(const std::string& path) { return Do("DELETE", path); }

TestResponse TestHttpClient::Do(const std::string& method, const std::string& path,
                                const std::string& body, const std::vector<std::string>& headers) {
  CURL* curl = static_cast<CURL*>(curl_);
  curl_easy_reset(curl);
  TestResponse response;
  const std::string url = base_ + path;
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  // Sent as written: "/./" and "/../" are what some tests are about.
  curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(absl::ToInt64Milliseconds(timeout_)));
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, CollectBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, CollectHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &response.headers);
  if (method == "PUT" || method == "POST" || !body.empty()) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
  }
  curl_slist* list = curl_slist_append(nullptr, "Expect:");  // no 100-continue round trip
  for (const std::string& header : headers) list = curl_slist_append(list, header.c_str());
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, list);
  CURLcode code = curl_easy_perform(curl);
  curl_slist_free_all(list);
  if (code != CURLE_OK) {
    response.error = curl_easy_strerror(code);
    return response;
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &response.status);
  return response;
}

RawConnection::RawConnection(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
  if (fd_ < 0) return;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
}

RawConnection::~RawConnection() {
  if (fd_ >= 0) close(fd_);
}

bool RawConnection::Send(const std::string& bytes) {
  size_t sent = 0;
  while (connected_ && sent < bytes.size()) {
    const ssize_t n = send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return connected_;
}

RawConnection::Received RawConnection::Receive(absl::Duration timeout, size_t enough) {
  Received received;
  const absl::Time deadline = absl::Now() + timeout;
  char buffer[4096];
  while (connected_ && (enough == 0 || received.bytes.size() < enough)) {
    const int left_ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    if (left_ms <= 0) break;
    pollfd poller{fd_, POLLIN, 0};
    if (poll(&poller, 1, left_ms) <= 0) break;
    const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n <= 0) {  // closed (0), or reset by the server
      received.closed = true;
      break;
    }
    received.bytes.append(buffer, static_cast<size_t>(n));
  }
  return received;
}

std::string RawExchange(int port, const std::string& bytes, absl::Duration timeout) {
  RawConnection connection(port);
  connection.Send(bytes);  // a server that refuses a request may close before it is all sent
  return connection.Receive(timeout).bytes;
}

}  // namespace registry::devserver::testing

// SPDX-License-Identifier: Apache-2.0
// integration/testing/dev_control.cc
#include "integration/testing/dev_control.h"

#include <curl/curl.h>

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"

namespace registry::integration {
namespace {

constexpr char kListening[] = "consul-dev-server listening on ";

size_t AppendBody(char* data, size_t size, size_t count, void* user_data) {
  static_cast<std::string*>(user_data)->append(data, size * count);
  return size * count;
}

// Keeps "Name: value" lines with the name as sent; the status and blank lines have no ':'.
size_t AppendHeader(char* data, size_t size, size_t count, void* user_data) {
  const absl::string_view line(data, size * count);
  const size_t colon = line.find(':');
  if (colon != absl::string_view::npos && !absl::StartsWith(line, "HTTP/")) {
    static_cast<HttpReply*>(user_data)->headers.emplace_back(
        std::string(line.substr(0, colon)),
        std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
  }
  return size * count;
}

}  // namespace

std::string HttpReply::Header(absl::string_view name) const {
  for (const auto& [header, value] : headers) {
    if (header == name) return value;
  }
  return "";
}

absl::StatusOr<DevServerProcess> StartDevServer(const std::string& binary,
                                                const std::vector<std::string>& extra_args) {
  std::vector<std::string> argv = {binary, "--http-addr=127.0.0.1:0"};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  absl::StatusOr<std::unique_ptr<Subprocess>> process = Subprocess::Start(argv);
  if (!process.ok()) return process.status();
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (std::optional<std::string> line = (*process)->ReadLine(deadline)) {
    if (absl::StartsWith(*line, kListening)) {
      return DevServerProcess{*std::move(process), line->substr(sizeof(kListening) - 1)};
    }
  }
  return absl::InternalError(
      absl::StrCat(binary, " printed no address; stderr: ", (*process)->err()));
}

absl::StatusOr<HttpReply> HttpCall(absl::string_view method, const std::string& url,
                                   absl::Duration timeout, const std::string& body,
                                   const std::string& token) {
  return HttpCall(method, url, timeout, body, token, HttpTls{});
}

absl::StatusOr<HttpReply> HttpCall(absl::string_view method, const std::string& url,
                                   absl::Duration timeout, const std::string& body,
                                   const std::string& token, const HttpTls& tls) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return absl::InternalError("curl_easy_init failed");
  if (!tls.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, tls.ca_file.c_str());
  if (!tls.verify_name) curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, 0L);
  if (!tls.cert_file.empty()) {
    curl_easy_setopt(curl, CURLOPT_SSLCERT, tls.cert_file.c_str());
    curl_easy_setopt(curl, CURLOPT_SSLKEY, tls.key_file.c_str());
  }
  HttpReply reply;
  const std::string verb(method);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, verb.c_str());
  // Sent as written: no dot-segment removal (some tests are about exactly that).
  curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);
  if (verb == "PUT" || !body.empty()) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  curl_slist* headers = curl_slist_append(nullptr, "Expect:");  // the body follows at once
  if (!token.empty()) {
    headers = curl_slist_append(headers, absl::StrCat("X-Consul-Token: ", token).c_str());
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(absl::ToInt64Milliseconds(timeout)));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, &AppendBody);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &reply.body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, &AppendHeader);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &reply);
  const CURLcode code = curl_easy_perform(curl);
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &reply.status);
  curl_easy_cleanup(curl);
  curl_slist_free_all(headers);
  if (code != CURLE_OK) {
    return absl::UnavailableError(absl::StrCat(verb, " ", url, ": ", curl_easy_strerror(code)));
  }
  return reply;
}

absl::Status DevControl(const std::string& address, absl::string_view path) {
  const std::string url = absl::StrCat("http://", address, path);
  absl::StatusOr<HttpReply> reply = HttpCall("PUT", url);
  if (!reply.ok()) return reply.status();
  if (reply->status != 200) {
    return absl::InternalError(absl::StrCat("PUT ", url, ": ", reply->status, " ", reply->body));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> KeySession(const std::string& address, absl::string_view consul_key,
                                       const std::string& token) {
  const std::string url = absl::StrCat("http://", address, "/v1/kv/", consul_key);
  absl::StatusOr<HttpReply> reply = HttpCall("GET", url, absl::Seconds(5), "", token);
  if (!reply.ok()) return reply.status();
  if (reply->status == 404) return std::string();
  nlohmann::json entries = nlohmann::json::parse(reply->body, nullptr, /*allow_exceptions=*/false);
  if (reply->status != 200 || !entries.is_array() || entries.empty() || !entries[0].is_object()) {
    return absl::InternalError(absl::StrCat("GET ", url, ": ", reply->status, " ", reply->body));
  }
  return entries[0].value("Session", std::string());
}

absl::StatusOr<std::vector<ListedKey>> ListPrefix(const std::string& address,
                                                  absl::string_view prefix,
                                                  const std::string& token) {
  const std::string url = absl::StrCat("http://", address, "/v1/kv/", prefix, "?recurse");
  absl::StatusOr<HttpReply> reply = HttpCall("GET", url, absl::Seconds(5), "", token);
  if (!reply.ok()) return reply.status();
  std::vector<ListedKey> keys;
  if (reply->status == 404) return keys;
  nlohmann::json entries = nlohmann::json::parse(reply->body, nullptr, /*allow_exceptions=*/false);
  if (reply->status != 200 || !entries.is_array()) {
    return absl::InternalError(absl::StrCat("GET ", url, ": ", reply->status, " ", reply->body));
  }
  for (const nlohmann::json& entry : entries) {
    if (!entry.is_object()) continue;
    keys.push_back({entry.value("Key", std::string()), entry.value("Session", std::string()),
                    entry.value("CreateIndex", uint64_t{0})});
  }
  std::sort(keys.begin(), keys.end(),
            [](const ListedKey& a, const ListedKey& b) { return a.create_index < b.create_index; });
  return keys;
}

}  // namespace registry::integration

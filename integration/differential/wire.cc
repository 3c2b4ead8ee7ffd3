// integration/differential/wire.cc
#include "integration/differential/wire.h"

#include <curl/curl.h>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace registry::differential {
namespace {

size_t AppendBody(char* data, size_t size, size_t count, void* user) {
  static_cast<std::string*>(user)->append(data, size * count);
  return size * count;
}

// Keeps "Name: value" lines; the status line and the blank line end up without a ':'.
size_t AppendHeader(char* data, size_t size, size_t count, void* user) {
  const std::string line(data, size * count);
  const size_t colon = line.find(':');
  if (colon != std::string::npos && line.rfind("HTTP/", 0) != 0) {
    static_cast<WireReply*>(user)->headers.emplace_back(
        line.substr(0, colon), std::string(absl::StripAsciiWhitespace(line.substr(colon + 1))));
  }
  return size * count;
}

}  // namespace

std::string WireReply::Header(const std::string& name) const {
  for (const auto& [header, value] : headers) {
    if (header == name) return value;
  }
  return "";
}

absl::StatusOr<WireReply> SendOnWire(const std::string& address, const std::string& method,
                                     const std::string& target, const std::string& body,
                                     const std::string& token) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return absl::InternalError("curl_easy_init failed");
  WireReply reply;
  const std::string url = absl::StrCat("http://", address, target);
  curl_easy_setopt(curl, CURLOPT_URL, url.c_str());
  curl_easy_setopt(curl, CURLOPT_PATH_AS_IS, 1L);
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method.c_str());
  if (method == "PUT" || !body.empty()) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.c_str());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, static_cast<long>(body.size()));
  }
  curl_slist* headers = curl_slist_append(nullptr, "Expect:");
  if (!token.empty()) {
    headers = curl_slist_append(headers, absl::StrCat("X-Consul-Token: ", token).c_str());
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 10000L);
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
    return absl::UnavailableError(
        absl::StrCat(method, " ", target, ": ", curl_easy_strerror(code)));
  }
  return reply;
}

}  // namespace registry::differential

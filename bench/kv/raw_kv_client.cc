// SPDX-License-Identifier: Apache-2.0
// bench/kv/raw_kv_client.cc
#include "bench/kv/raw_kv_client.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace registry::bench {

RawKvClient::RawKvClient(const std::string& address)
    : base_url_(
          absl::StrCat(absl::StrContains(address, "://") ? "" : "http://", address, "/v1/kv/")),
      easy_(curl_easy_init()) {
  // The plugin sends no "Expect: 100-continue" either: waiting for it would add a round trip.
  headers_ = curl_slist_append(headers_, "Expect:");
  curl_easy_setopt(easy_, CURLOPT_HTTPHEADER, headers_);
  curl_easy_setopt(easy_, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy_, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(easy_, CURLOPT_TIMEOUT_MS, 10000L);
  curl_easy_setopt(easy_, CURLOPT_WRITEFUNCTION, CollectBody);
  curl_easy_setopt(easy_, CURLOPT_WRITEDATA, &body_);
}

RawKvClient::~RawKvClient() {
  curl_easy_cleanup(easy_);
  curl_slist_free_all(headers_);
}

absl::Status RawKvClient::Put(const std::string& key, const std::string& value) {
  curl_easy_setopt(easy_, CURLOPT_CUSTOMREQUEST, "PUT");
  curl_easy_setopt(easy_, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(value.size()));
  curl_easy_setopt(easy_, CURLOPT_POSTFIELDS, value.data());
  long http_status = 0;
  if (absl::Status sent = Perform(key, "", &http_status); !sent.ok()) return sent;
  // Consul ends the body with a newline, the dev server does not.
  if (http_status != 200 || absl::StripAsciiWhitespace(body_) != "true") {
    return absl::InternalError(absl::StrCat("PUT ", key, ": ", http_status, " ", body_));
  }
  return absl::OkStatus();
}

absl::Status RawKvClient::Get(const std::string& key) {
  curl_easy_setopt(easy_, CURLOPT_CUSTOMREQUEST, nullptr);
  curl_easy_setopt(easy_, CURLOPT_HTTPGET, 1L);
  long http_status = 0;
  if (absl::Status sent = Perform(key, "", &http_status); !sent.ok()) return sent;
  if (http_status != 200) {
    return absl::InternalError(absl::StrCat("GET ", key, ": ", http_status, " ", body_));
  }
  return absl::OkStatus();
}

absl::Status RawKvClient::DeleteTree(const std::string& prefix) {
  curl_easy_setopt(easy_, CURLOPT_HTTPGET, 1L);  // drops the PUT body, if any
  curl_easy_setopt(easy_, CURLOPT_CUSTOMREQUEST, "DELETE");
  long http_status = 0;
  if (absl::Status sent = Perform(prefix, "?recurse", &http_status); !sent.ok()) return sent;
  if (http_status != 200) {
    return absl::InternalError(absl::StrCat("DELETE ", prefix, ": ", http_status, " ", body_));
  }
  return absl::OkStatus();
}

absl::Status RawKvClient::Perform(const std::string& key, const char* query, long* http_status) {
  body_.clear();
  const std::string url = absl::StrCat(base_url_, key, query);
  curl_easy_setopt(easy_, CURLOPT_URL, url.c_str());
  const CURLcode result = curl_easy_perform(easy_);
  if (result != CURLE_OK) {
    return absl::UnavailableError(absl::StrCat(url, ": ", curl_easy_strerror(result)));
  }
  curl_easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, http_status);
  return absl::OkStatus();
}

size_t RawKvClient::CollectBody(char* data, size_t size, size_t count, void* user_data) {
  static_cast<std::string*>(user_data)->append(data, size * count);
  return size * count;
}

}  // namespace registry::bench

// SPDX-License-Identifier: Apache-2.0
// bench/kv/raw_kv_client.h
//
// The baseline of kv_bench: the cheapest way to talk to Consul's KV API from C++, one libcurl
// easy handle reused for every request, so every request after the first rides the same
// kept-alive connection. No retry, no JSON parsing, no consistency mode: what the plugin is
// compared with.
//
// Thread safety: one thread at a time.
#ifndef BENCH_KV_RAW_KV_CLIENT_H_
#define BENCH_KV_RAW_KV_CLIENT_H_

#include <curl/curl.h>

#include <string>

#include "absl/status/status.h"

namespace registry::bench {

class RawKvClient {
 public:
  // `address`: "HOST:PORT" or "http://HOST:PORT".
  explicit RawKvClient(const std::string& address);
  ~RawKvClient();
  RawKvClient(const RawKvClient&) = delete;
  RawKvClient& operator=(const RawKvClient&) = delete;

  // PUT /v1/kv/<key> with `value` as the body; OK when Consul answered 200 "true".
  absl::Status Put(const std::string& key, const std::string& value);
  // GET /v1/kv/<key> (the default consistency mode); OK when Consul answered 200.
  absl::Status Get(const std::string& key);
  // DELETE /v1/kv/<prefix>?recurse: removes a run's keys from a server that outlives it.
  absl::Status DeleteTree(const std::string& prefix);

 private:
  // Sends the request the easy handle is set up for to /v1/kv/<key><query>; returns the status
  // code (the body is in body_).
  absl::Status Perform(const std::string& key, const char* query, long* http_status);

  static size_t CollectBody(char* data, size_t size, size_t count, void* user_data);

  std::string base_url_;  // "http://HOST:PORT/v1/kv/"
  CURL* easy_;
  curl_slist* headers_ = nullptr;
  std::string body_;  // of the last answer
};

}  // namespace registry::bench

#endif  // BENCH_KV_RAW_KV_CLIENT_H_

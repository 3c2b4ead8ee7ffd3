// SPDX-License-Identifier: Apache-2.0
// consul/kv.h
//
// The KV endpoint (/v1/kv/) as request builders and response parsers. Building and parsing are
// separate from execution so that anything able to send an HttpRequest (Client, or an engine
// multiplexing many blocking queries on one thread) shares exactly the same semantics.
//
// Keys: a key never starts with '/', holds no control characters, and is non-empty for
// single-key operations (an empty prefix is allowed for listings and recursive deletes). Keys
// are percent-escaped into the path (url.h). Values are raw bytes of at most kMaxValueBytes.
// Every builder returns InvalidArgument naming the key or option at fault.
//
// Parsers take the request they answer (for error messages) and map errors as errors.h says.
//
// Thread safety: pure functions.
#ifndef CONSUL_KV_H_
#define CONSUL_KV_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "base/limits.h"
#include "consul/http_types.h"
#include "consul/query.h"
#include "nlohmann/json_fwd.hpp"

namespace registry::consul {

// Consul's KV value limit (kv_max_value_size default); larger values are refused client-side.
inline constexpr size_t kMaxValueBytes = limits::kMaxValueBytes;

// One KV entry as Consul stores it.
struct DirEntry {
  std::string key{};
  std::string value{};  // raw bytes (base64-decoded); empty when Consul sends null
  uint64_t flags = 0;
  std::string session{};  // holder session id, empty when unlocked
  uint64_t lock_index = 0;
  uint64_t create_index = 0;
  uint64_t modify_index = 0;

  friend bool operator==(const DirEntry&, const DirEntry&) = default;
};

struct KvGetResult {
  QueryMeta meta;
  std::optional<DirEntry> entry;  // nullopt: the key does not exist (HTTP 404)
};

struct KvGetRawResult {
  QueryMeta meta;
  std::optional<std::string> value;  // nullopt: the key does not exist
};

struct KvListResult {
  QueryMeta meta;
  std::vector<DirEntry> entries;  // in Consul's (lexicographic) order; empty if none
};

struct KvKeysResult {
  QueryMeta meta;
  std::vector<std::string> keys;  // full keys; empty if none
};

struct KvPutOptions {
  uint64_t flags = 0;                    // always written by Consul (default 0)
  std::optional<uint64_t> cas{};         // 0: create only if absent; N: only if ModifyIndex == N
  std::optional<std::string> acquire{};  // session id taking the lock
  std::optional<std::string> release{};  // session id releasing the lock
};

struct KvDeleteOptions {
  bool recurse = false;           // delete every key with this prefix
  std::optional<uint64_t> cas{};  // delete only if ModifyIndex == N (true if the key is absent)
};

// OK if `key` is a Consul KV key the client may send; `allow_empty` is for prefixes (listings,
// recursive deletes).
absl::Status ValidateConsulKey(absl::string_view key, bool allow_empty);

// GET /v1/kv/<key>: one entry, or absent.
absl::StatusOr<HttpRequest> BuildKvGetRequest(absl::string_view key, const QueryOptions& query);
absl::StatusOr<KvGetResult> ParseKvGetResponse(const HttpRequest& request,
                                               const HttpResponse& response);

// GET /v1/kv/<key>?raw: the bare value, or absent.
absl::StatusOr<HttpRequest> BuildKvGetRawRequest(absl::string_view key, const QueryOptions& query);
absl::StatusOr<KvGetRawResult> ParseKvGetRawResponse(const HttpRequest& request,
                                                     const HttpResponse& response);

// GET /v1/kv/<prefix>?recurse: every entry under `prefix` (404 = empty list).
absl::StatusOr<HttpRequest> BuildKvListRequest(absl::string_view prefix, const QueryOptions& query);
absl::StatusOr<KvListResult> ParseKvListResponse(const HttpRequest& request,
                                                 const HttpResponse& response);

// GET /v1/kv/<prefix>?keys[&separator=<s>]: keys under `prefix`; with a separator, keys are cut
// after the first separator following the prefix and deduplicated (404 = empty list).
absl::StatusOr<HttpRequest> BuildKvKeysRequest(absl::string_view prefix,
                                               absl::string_view separator,
                                               const QueryOptions& query);
absl::StatusOr<KvKeysResult> ParseKvKeysResponse(const HttpRequest& request,
                                                 const HttpResponse& response);

// PUT /v1/kv/<key>[?flags][&cas|&acquire|&release] with `value` as body. At most one of cas,
// acquire, release. The parsed bool is Consul's answer: always true for a plain put; false when
// a cas/acquire/release did not apply (a normal outcome, not an error). Only an acquire is
// replay_safe (txn.h: Writers, kShared).
absl::StatusOr<HttpRequest> BuildKvPutRequest(absl::string_view key, absl::string_view value,
                                              const KvPutOptions& options);
absl::StatusOr<bool> ParseKvPutResponse(const HttpRequest& request, const HttpResponse& response);

// DELETE /v1/kv/<key>[?recurse|?cas=N]. recurse and cas are exclusive. The parsed bool is false
// only when a cas delete did not apply. Never replay_safe (txn.h: Writers, kShared).
absl::StatusOr<HttpRequest> BuildKvDeleteRequest(absl::string_view key,
                                                 const KvDeleteOptions& options);
absl::StatusOr<bool> ParseKvDeleteResponse(const HttpRequest& request,
                                           const HttpResponse& response);

// Decodes one DirEntry JSON object (also used for txn results). `what` names it in errors.
// Errors: InvalidArgument detail (wrong types, missing fields, bad base64).
absl::StatusOr<DirEntry> DirEntryFromJson(const nlohmann::json& object, absl::string_view what);

}  // namespace registry::consul

#endif  // CONSUL_KV_H_

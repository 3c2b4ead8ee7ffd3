// SPDX-License-Identifier: Apache-2.0
// devserver/json_codec.h
//
// Consul's JSON shapes for the dev server: DirEntry and Session output (Go field order,
// base64 values, null for empty), and decoding of /v1/session/create and /v1/txn bodies with
// Go's rules (field names match case-insensitively, LockDelay numbers below 1000 are
// seconds, values are base64).
//
// Thread safety: pure functions.
#ifndef DEVSERVER_JSON_CODEC_H_
#define DEVSERVER_JSON_CODEC_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "devserver/store_types.h"
#include "nlohmann/json.hpp"

namespace registry::devserver {

using Json = nlohmann::ordered_json;

inline constexpr size_t kMaxValueBytes = 512 * 1024;  // Consul's kv_max_value_size
inline constexpr size_t kMaxTxnOps = 128;             // since Consul 1.14
inline constexpr size_t kMaxTxnBytes = 512 * 1024;    // Consul's txn_max_req_len

// Appends `entry` as Consul's DirEntry object: {"LockIndex","Key","Flags","Value",
// "Session"(only when held),"CreateIndex","ModifyIndex"}; Value is base64, or null when empty;
// strings are written as Go writes them (AppendGoJsonString), so any key bytes are answerable.
// Written directly rather than through Json: a listing of 10,000 keys is the body of every
// wake-up of a watch on their prefix, and building it as a Json tree took ten times longer.
void AppendDirEntryJson(const DirEntry& entry, std::string* out);

// A JSON array of `strings` as Go writes them: the body of a ?keys read.
std::string StringsJson(const std::vector<std::string>& strings);

// Consul's Session object; LockDelay in nanoseconds.
Json SessionJson(const SessionEntry& session);

// Decodes a /v1/session/create body over `defaults` (already holding the agent's node and
// Consul's defaults). Listing any of Checks/NodeChecks/ServiceChecks replaces the default
// serfHealth check. Errors are InvalidArgument with the reason (Consul prefixes
// "Request decode failed: ").
absl::StatusOr<SessionCreateRequest> DecodeSessionCreate(absl::string_view body,
                                                         SessionCreateRequest defaults);

// The node of a /v1/catalog/register body (services and checks are not kept).
struct NodeRegistration {
  std::string node;
  std::string address;
};
// Decodes a /v1/catalog/register body strictly, as Consul does. Errors are InvalidArgument with
// Go's decoder message (Consul prefixes "Request decode failed: ").
absl::StatusOr<NodeRegistration> DecodeCatalogRegister(absl::string_view body);

// Decodes a /v1/txn body. InvalidArgument (HTTP 400, "Failed to parse body: ...") for
// malformed JSON or base64; ResourceExhausted (HTTP 413) with Consul's message for more than
// kMaxTxnOps operations or a value over kMaxValueBytes. Operations Consul would reject one by
// one (unknown verb, non-KV operation) come back with KvOp::error set.
absl::StatusOr<std::vector<KvOp>> DecodeTxnOps(absl::string_view body);

}  // namespace registry::devserver

#endif  // DEVSERVER_JSON_CODEC_H_

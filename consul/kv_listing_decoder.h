// SPDX-License-Identifier: Apache-2.0
// consul/kv_listing_decoder.h
//
// The answers of a watch's blocking KV reads, decoded where Consul's format is known:
//  - ParseKvReadAnswer: whether an answer is one a watch can use (found, or nothing at the key
//    or prefix) and its query metadata, or the failure;
//  - ForEachListingEntry: a fast decoder of the body of a recursive KV listing
//    (GET /v1/kv/<prefix>?recurse), the JSON array of DirEntry objects that every watch answer
//    carries. A watch over a large subtree gets the whole subtree on every change, so this runs
//    once per change per watch; a general JSON DOM costs several times more. It reads exactly
//    the fields of DirEntry (Key, Value as base64 or null, Flags, Session, LockIndex,
//    CreateIndex, ModifyIndex), skips any other field, and gives up (false) on anything
//    unexpected, so the caller can fall back to ParseKvListResponse (kv.h), which produces the
//    precise error.
//
// Thread safety: pure functions.
#ifndef CONSUL_KV_LISTING_DECODER_H_
#define CONSUL_KV_LISTING_DECODER_H_

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "consul/http_types.h"
#include "consul/query.h"

namespace registry::consul {

// The query metadata of the answer to a KV read (a single key, a recursive listing or a keys
// listing) that a watch can use: the key or prefix exists (HTTP 200), or nothing is there (404:
// an absent key, an empty subtree). Otherwise the failure: `response`'s own (transport error,
// cancellation), the error of the HTTP answer as errors.h maps it, Internal for any other
// success code, DataLoss for malformed query headers.
absl::StatusOr<QueryMeta> ParseKvReadAnswer(const HttpRequest& request,
                                            const absl::StatusOr<HttpResponse>& response);

// True when a usable answer (ParseKvReadAnswer) found the key or prefix and carries its entries
// in its body; false when nothing is there (an empty listing, an absent key).
bool KvReadFound(const HttpResponse& response);

// One entry of a listing as read. The views point into the body, or (for a string with
// escapes) into the reader's buffers, and are valid only during the visit.
struct ListingEntryView {
  absl::string_view key;
  absl::string_view value_base64;  // empty for "Value": null, "" or no Value field
  absl::string_view session;
  uint64_t flags = 0;
  uint64_t lock_index = 0;
  uint64_t create_index = 0;
  uint64_t modify_index = 0;
};

// Calls `visit` for each entry of `body`, in order, without copying anything: a watch compares
// most entries of a big listing with what its listener already has and keeps none of them.
// Returns true iff `body` is a well-formed array of DirEntry objects with a string Key and
// numeric indexes and every visit returned true; on false, `visit` may have seen a prefix of
// the entries. The base64 of values is not checked here.
bool ForEachListingEntry(absl::string_view body,
                         absl::FunctionRef<bool(const ListingEntryView&)> visit);

}  // namespace registry::consul

#endif  // CONSUL_KV_LISTING_DECODER_H_

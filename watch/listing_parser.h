// watch/listing_parser.h
//
// A fast parser for the body of a recursive KV listing (GET /v1/kv/<prefix>?recurse): the JSON
// array of DirEntry objects that every watch answer carries. A watch over a large subtree gets
// the whole subtree on every change, so this runs once per change per watch; a general JSON DOM
// costs several times more. It reads exactly the fields of consul::DirEntry (Key, Value as
// base64 or null, Flags, Session, LockIndex, CreateIndex, ModifyIndex), skips any other field,
// and gives up (false) on anything unexpected, so the caller can fall back to
// consul::ParseKvListResponse, which produces the precise error.
//
// Thread safety: pure function.
#ifndef WATCH_LISTING_PARSER_H_
#define WATCH_LISTING_PARSER_H_

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"

namespace registry::watch {

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

}  // namespace registry::watch

#endif  // WATCH_LISTING_PARSER_H_

// watch/listing_parser.h
//
// A fast parser for the body of a recursive KV listing (GET /v1/kv/<prefix>?recurse): the JSON
// array of DirEntry objects that every watch answer carries. A watch over a large subtree gets
// the whole subtree on every change, so this runs once per change per watch; a general JSON DOM
// costs several times more. It reads exactly the fields of consul::DirEntry (Key, Value as
// base64 or null, Flags, Session, LockIndex, CreateIndex, ModifyIndex), skips any other field,
// and gives up (nullopt) on anything unexpected, so the caller can fall back to
// consul::ParseKvListResponse, which produces the precise error.
//
// Thread safety: pure function.
#ifndef WATCH_LISTING_PARSER_H_
#define WATCH_LISTING_PARSER_H_

#include <optional>
#include <vector>

#include "absl/strings/string_view.h"
#include "registry/consul/kv.h"

namespace registry::watch {

// The entries of `body` in order, or nullopt if it is not a well-formed array of DirEntry
// objects with a string Key and numeric indexes.
std::optional<std::vector<consul::DirEntry>> ParseListingBody(absl::string_view body);

}  // namespace registry::watch

#endif  // WATCH_LISTING_PARSER_H_

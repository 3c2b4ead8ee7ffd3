// SPDX-License-Identifier: Apache-2.0
// devserver/api_util.h
//
// Response builders shared by the api*.cc files (internal to the dev server library): Consul
// answers errors as plain text and data as JSON, and every read carries the query meta
// headers.
//
// Thread safety: pure functions.
#ifndef DEVSERVER_API_UTIL_H_
#define DEVSERVER_API_UTIL_H_

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/strings/string_view.h"
#include "devserver/http_message.h"
#include "devserver/json_codec.h"

namespace registry::devserver {

// `status` with a text/plain body (how Consul's Go handlers write errors).
HttpResponse TextResponse(int status, absl::string_view text);

// `status` with a JSON body. Strings that are not valid UTF-8 are written with U+FFFD in place
// of the bad bytes, as Go does, instead of failing the response.
HttpResponse JsonResponse(int status, const Json& body);

// `status` with `json`, already serialized, as the body.
HttpResponse RawJsonResponse(int status, std::string json);

// Adds X-Consul-Index (at least 1), X-Consul-Knownleader: true and X-Consul-Lastcontact: 0, as
// Consul's setMeta does for KV and session reads, with Go's canonical header names.
void SetQueryMeta(HttpResponse* response, uint64_t index);

// The query meta of a read whose RPC failed: Consul's deferred setMeta writes the zero
// QueryMeta (X-Consul-Index: 1, X-Consul-Knownleader: false, X-Consul-Lastcontact: 0).
void SetFailedQueryMeta(HttpResponse* response);

// 413 for a body of `size` bytes over `limit`, in Consul's words, naming the configuration
// option (`kv_max_value_size`, `txn_max_req_len`); the connection closes after it, as Go's
// server closes one whose large body the handler did not read.
HttpResponse BodyTooLarge(uint64_t size, uint64_t limit, absl::string_view option);

// 405 with Consul's "method X not allowed" and an Allow header listing OPTIONS and `allowed`.
HttpResponse MethodNotAllowed(absl::string_view method,
                              std::initializer_list<absl::string_view> allowed);

// 301 to `location`, as Go's http.Redirect writes it: a small HTML body for GET only.
HttpResponse MovedPermanently(absl::string_view method, const std::string& location);

// 200 with the same Allow header, Consul's answer to OPTIONS.
HttpResponse OptionsResponse(std::initializer_list<absl::string_view> allowed);

}  // namespace registry::devserver

#endif  // DEVSERVER_API_UTIL_H_

// SPDX-License-Identifier: Apache-2.0
#include "consul/kv.h"

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/status_text.h"
#include "consul/errors.h"
#include "consul/json_util.h"
#include "consul/url.h"
#include "nlohmann/json.hpp"

namespace registry::consul {
namespace {

absl::Status KeyError(absl::string_view key, absl::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("consul kv key '", absl::CHexEscape(Abbreviated(key)), "': ", problem));
}

HttpRequest KvRequest(HttpMethod method, absl::string_view key) {
  HttpRequest request;
  request.method = method;
  request.path = absl::StrCat("/v1/kv/", EscapeKeyPath(key));
  return request;
}

absl::StatusOr<HttpRequest> ReadRequest(absl::string_view key, bool allow_empty, const char* flag) {
  RETURN_IF_ERROR(ValidateConsulKey(key, allow_empty));
  HttpRequest request = KvRequest(HttpMethod::kGet, key);
  if (flag != nullptr) request.params.emplace_back(flag, "");
  return request;
}

absl::StatusOr<std::vector<DirEntry>> EntriesFromBody(const HttpRequest& request,
                                                      const HttpResponse& response) {
  ASSIGN_OR_RETURN(nlohmann::json body, ParseJsonBody(request, response));
  if (!body.is_array()) {
    return MalformedResponse(
        request, absl::StrCat("body is a JSON ", body.type_name(), ", not an array of entries"));
  }
  std::vector<DirEntry> entries;
  entries.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    absl::StatusOr<DirEntry> entry = DirEntryFromJson(body[i], absl::StrCat("entry ", i));
    if (!entry.ok()) return MalformedResponse(request, entry.status().message());
    entries.push_back(*std::move(entry));
  }
  return entries;
}

absl::StatusOr<bool> BoolBody(const HttpRequest& request, const HttpResponse& response) {
  if (response.status != 200) return ErrorFromResponse(request, response);
  ASSIGN_OR_RETURN(nlohmann::json body, ParseJsonBody(request, response));
  if (!body.is_boolean()) {
    return MalformedResponse(request,
                             absl::StrCat("body is a JSON ", body.type_name(), ", not true/false"));
  }
  return body.get<bool>();
}

absl::Status CheckSessionOption(absl::string_view key, const char* option,
                                const std::optional<std::string>& session) {
  if (session.has_value() && session->empty()) {
    return KeyError(key, absl::StrCat("option '", option, "' needs a session id"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateConsulKey(absl::string_view key, bool allow_empty) {
  if (key.empty()) {
    return allow_empty ? absl::OkStatus() : KeyError(key, "must not be empty");
  }
  if (key.front() == '/') return KeyError(key, "must not start with '/'");
  for (unsigned char c : key) {
    if (c < 0x20 || c == 0x7f) return KeyError(key, "must not contain control characters");
  }
  return absl::OkStatus();
}

absl::StatusOr<HttpRequest> BuildKvGetRequest(absl::string_view key, const QueryOptions& query) {
  ASSIGN_OR_RETURN(HttpRequest request, ReadRequest(key, /*allow_empty=*/false, nullptr));
  RETURN_IF_ERROR(ApplyQueryOptions(query, &request));
  return request;
}

absl::StatusOr<HttpRequest> BuildKvGetRawRequest(absl::string_view key, const QueryOptions& query) {
  ASSIGN_OR_RETURN(HttpRequest request, ReadRequest(key, /*allow_empty=*/false, "raw"));
  RETURN_IF_ERROR(ApplyQueryOptions(query, &request));
  return request;
}

absl::StatusOr<HttpRequest> BuildKvListRequest(absl::string_view prefix,
                                               const QueryOptions& query) {
  ASSIGN_OR_RETURN(HttpRequest request, ReadRequest(prefix, /*allow_empty=*/true, "recurse"));
  RETURN_IF_ERROR(ApplyQueryOptions(query, &request));
  return request;
}

absl::StatusOr<HttpRequest> BuildKvKeysRequest(absl::string_view prefix,
                                               absl::string_view separator,
                                               const QueryOptions& query) {
  ASSIGN_OR_RETURN(HttpRequest request, ReadRequest(prefix, /*allow_empty=*/true, "keys"));
  if (!separator.empty()) request.params.emplace_back("separator", std::string(separator));
  RETURN_IF_ERROR(ApplyQueryOptions(query, &request));
  return request;
}

absl::StatusOr<KvGetResult> ParseKvGetResponse(const HttpRequest& request,
                                               const HttpResponse& response) {
  if (response.status != 200 && response.status != 404) {
    return ErrorFromResponse(request, response);
  }
  KvGetResult result;
  ASSIGN_OR_RETURN(result.meta, ParseQueryMeta(request, response));
  if (response.status == 404) return result;
  ASSIGN_OR_RETURN(std::vector<DirEntry> entries, EntriesFromBody(request, response));
  if (entries.size() > 1) {
    return MalformedResponse(request, absl::StrCat(entries.size(), " entries for a single key"));
  }
  if (!entries.empty()) result.entry = std::move(entries.front());
  return result;
}

absl::StatusOr<KvGetRawResult> ParseKvGetRawResponse(const HttpRequest& request,
                                                     const HttpResponse& response) {
  if (response.status != 200 && response.status != 404) {
    return ErrorFromResponse(request, response);
  }
  KvGetRawResult result;
  ASSIGN_OR_RETURN(result.meta, ParseQueryMeta(request, response));
  if (response.status == 200) result.value = response.body;
  return result;
}

absl::StatusOr<KvListResult> ParseKvListResponse(const HttpRequest& request,
                                                 const HttpResponse& response) {
  if (response.status != 200 && response.status != 404) {
    return ErrorFromResponse(request, response);
  }
  KvListResult result;
  ASSIGN_OR_RETURN(result.meta, ParseQueryMeta(request, response));
  if (response.status == 404) return result;
  ASSIGN_OR_RETURN(result.entries, EntriesFromBody(request, response));
  return result;
}

absl::StatusOr<KvKeysResult> ParseKvKeysResponse(const HttpRequest& request,
                                                 const HttpResponse& response) {
  if (response.status != 200 && response.status != 404) {
    return ErrorFromResponse(request, response);
  }
  KvKeysResult result;
  ASSIGN_OR_RETURN(result.meta, ParseQueryMeta(request, response));
  if (response.status == 404) return result;
  ASSIGN_OR_RETURN(nlohmann::json body, ParseJsonBody(request, response));
  if (!body.is_array()) {
    return MalformedResponse(
        request, absl::StrCat("body is a JSON ", body.type_name(), ", not an array of keys"));
  }
  result.keys.reserve(body.size());
  for (size_t i = 0; i < body.size(); ++i) {
    if (!body[i].is_string()) {
      return MalformedResponse(
          request, absl::StrCat("key ", i, " is a JSON ", body[i].type_name(), ", not a string"));
    }
    result.keys.push_back(body[i].get<std::string>());
  }
  return result;
}

absl::StatusOr<HttpRequest> BuildKvPutRequest(absl::string_view key, absl::string_view value,
                                              const KvPutOptions& options) {
  RETURN_IF_ERROR(ValidateConsulKey(key, /*allow_empty=*/false));
  if (value.size() > kMaxValueBytes) {
    return KeyError(key, absl::StrCat("value of ", value.size(), " bytes exceeds the limit of ",
                                      kMaxValueBytes, " bytes"));
  }
  int exclusive =
      options.cas.has_value() + options.acquire.has_value() + options.release.has_value();
  if (exclusive > 1) {
    return KeyError(key, "options 'cas', 'acquire' and 'release' are mutually exclusive");
  }
  RETURN_IF_ERROR(CheckSessionOption(key, "acquire", options.acquire));
  RETURN_IF_ERROR(CheckSessionOption(key, "release", options.release));
  HttpRequest request = KvRequest(HttpMethod::kPut, key);
  if (options.flags != 0) request.params.emplace_back("flags", absl::StrCat(options.flags));
  if (options.cas.has_value()) request.params.emplace_back("cas", absl::StrCat(*options.cas));
  if (options.acquire.has_value()) request.params.emplace_back("acquire", *options.acquire);
  if (options.release.has_value()) request.params.emplace_back("release", *options.release);
  // A repeated acquire by the session that holds the key applies the same (the session is the
  // key's only writer while it holds it). A repeated release answers false for a release that
  // was applied, a repeated check-and-set fails against its own first apply, and a repeated plain
  // put may undo another client's later write (txn.h: Writers).
  request.replay_safe = options.acquire.has_value();
  request.headers.emplace_back("Content-Type", "application/octet-stream");
  request.body = std::string(value);
  return request;
}

absl::StatusOr<bool> ParseKvPutResponse(const HttpRequest& request, const HttpResponse& response) {
  return BoolBody(request, response);
}

absl::StatusOr<HttpRequest> BuildKvDeleteRequest(absl::string_view key,
                                                 const KvDeleteOptions& options) {
  RETURN_IF_ERROR(ValidateConsulKey(key, /*allow_empty=*/options.recurse));
  if (options.recurse && options.cas.has_value()) {
    return KeyError(key, "options 'recurse' and 'cas' are mutually exclusive for delete");
  }
  HttpRequest request = KvRequest(HttpMethod::kDelete, key);
  if (options.recurse) request.params.emplace_back("recurse", "");
  if (options.cas.has_value()) request.params.emplace_back("cas", absl::StrCat(*options.cas));
  // A repeated delete may remove a key another client wrote since (txn.h: Writers).
  request.replay_safe = false;
  return request;
}

absl::StatusOr<bool> ParseKvDeleteResponse(const HttpRequest& request,
                                           const HttpResponse& response) {
  return BoolBody(request, response);
}

absl::StatusOr<DirEntry> DirEntryFromJson(const nlohmann::json& object, absl::string_view what) {
  RETURN_IF_ERROR(ExpectObject(object, what));
  DirEntry entry;
  ASSIGN_OR_RETURN(entry.key, RequiredString(object, "Key", what));
  std::string named = absl::StrCat(what, " (key '", absl::CHexEscape(Abbreviated(entry.key)), "')");
  ASSIGN_OR_RETURN(std::optional<std::string> encoded, OptionalString(object, "Value", named));
  if (encoded.has_value() && !absl::Base64Unescape(*encoded, &entry.value)) {
    return absl::InvalidArgumentError(absl::StrCat(named, ": \"Value\" is not valid base64"));
  }
  ASSIGN_OR_RETURN(std::optional<uint64_t> flags, OptionalUint(object, "Flags", named));
  entry.flags = flags.value_or(0);
  ASSIGN_OR_RETURN(std::optional<std::string> session, OptionalString(object, "Session", named));
  entry.session = session.value_or("");
  ASSIGN_OR_RETURN(std::optional<uint64_t> lock_index, OptionalUint(object, "LockIndex", named));
  entry.lock_index = lock_index.value_or(0);
  ASSIGN_OR_RETURN(entry.create_index, RequiredUint(object, "CreateIndex", named));
  ASSIGN_OR_RETURN(entry.modify_index, RequiredUint(object, "ModifyIndex", named));
  return entry;
}

}  // namespace registry::consul

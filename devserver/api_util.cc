// SPDX-License-Identifier: Apache-2.0
#include "devserver/api_util.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace registry::devserver {
namespace {

std::string AllowHeader(std::initializer_list<absl::string_view> allowed) {
  std::vector<absl::string_view> methods = {"OPTIONS"};
  methods.insert(methods.end(), allowed.begin(), allowed.end());
  return absl::StrJoin(methods, ",");
}

}  // namespace

HttpResponse TextResponse(int status, absl::string_view text) {
  HttpResponse response;
  response.status = status;
  response.content_type = "text/plain; charset=utf-8";
  response.body = std::string(text);
  return response;
}

HttpResponse JsonResponse(int status, const Json& body) {
  return RawJsonResponse(status, body.dump(-1, ' ', false, Json::error_handler_t::replace));
}

HttpResponse RawJsonResponse(int status, std::string json) {
  HttpResponse response;
  response.status = status;
  response.content_type = "application/json";
  response.body = std::move(json);
  return response;
}

void SetQueryMeta(HttpResponse* response, uint64_t index) {
  // Names as Go's net/http writes them (canonical MIME case), byte for byte: a client matching
  // header names exactly must read the same from this server as from Consul.
  response->headers.emplace_back("X-Consul-Index", absl::StrCat(std::max<uint64_t>(index, 1)));
  response->headers.emplace_back("X-Consul-Knownleader", "true");
  response->headers.emplace_back("X-Consul-Lastcontact", "0");
}

void SetFailedQueryMeta(HttpResponse* response) {
  response->headers.emplace_back("X-Consul-Index", "1");
  response->headers.emplace_back("X-Consul-Knownleader", "false");
  response->headers.emplace_back("X-Consul-Lastcontact", "0");
}

HttpResponse BodyTooLarge(uint64_t size, uint64_t limit, absl::string_view option) {
  HttpResponse response = TextResponse(
      413, absl::StrCat("Request body(", size, " bytes) too large, max size: ", limit,
                        " bytes. See https://developer.hashicorp.com/docs/agent/config/"
                        "config-files#",
                        option, "."));
  response.close_connection = true;
  return response;
}

HttpResponse MethodNotAllowed(absl::string_view method,
                              std::initializer_list<absl::string_view> allowed) {
  HttpResponse response = TextResponse(405, absl::StrCat("method ", method, " not allowed"));
  response.headers.emplace_back("Allow", AllowHeader(allowed));
  return response;
}

HttpResponse OptionsResponse(std::initializer_list<absl::string_view> allowed) {
  HttpResponse response;
  response.headers.emplace_back("Allow", AllowHeader(allowed));
  return response;
}

HttpResponse MovedPermanently(absl::string_view method, const std::string& location) {
  HttpResponse response;
  response.status = 301;
  response.outside_handlers = true;
  response.headers.emplace_back("Location", location);
  if (method == "GET") {
    response.content_type = "text/html; charset=utf-8";
    response.body = absl::StrCat("<a href=\"", absl::StrReplaceAll(location, {{"&", "&amp;"}}),
                                 "\">Moved Permanently</a>.\n\n");
  }
  return response;
}

}  // namespace registry::devserver

// SPDX-License-Identifier: Apache-2.0
#include "consul/http_types.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_text.h"

namespace registry::consul {
namespace {

const std::string* FindIn(const HeaderList& list, absl::string_view name) {
  for (const auto& [key, value] : list) {
    if (absl::EqualsIgnoreCase(key, name)) return &value;
  }
  return nullptr;
}

}  // namespace

const char* HttpMethodName(HttpMethod method) {
  switch (method) {
    case HttpMethod::kGet:
      return "GET";
    case HttpMethod::kPut:
      return "PUT";
    case HttpMethod::kDelete:
      return "DELETE";
  }
  return "GET";
}

const std::string* HttpRequest::FindParam(absl::string_view name) const {
  for (const auto& [key, value] : params) {
    if (key == name) return &value;
  }
  return nullptr;
}

const std::string* HttpRequest::FindHeader(absl::string_view name) const {
  return FindIn(headers, name);
}

const std::string* HttpResponse::FindHeader(absl::string_view name) const {
  return FindIn(headers, name);
}

std::string RequestLabel(const HttpRequest& request) {
  return absl::StrCat("consul ", HttpMethodName(request.method), " ", Abbreviated(request.path));
}

}  // namespace registry::consul

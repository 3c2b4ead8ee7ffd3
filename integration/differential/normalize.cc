// SPDX-License-Identifier: Apache-2.0
// integration/differential/normalize.cc
#include "integration/differential/normalize.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/string_view.h"

namespace registry::differential {
namespace {

// Length of the UUID (8-4-4-4-12 lower-case hex digits) starting at `text[at]`, or 0.
size_t UuidAt(const std::string& text, size_t at) {
  constexpr absl::string_view kShape = "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
  if (text.size() - at < kShape.size()) return 0;
  for (size_t i = 0; i < kShape.size(); ++i) {
    const char c = text[at + i];
    const bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
    if (kShape[i] == '-' ? c != '-' : !hex) return 0;
  }
  return kShape.size();
}

// Consul's messages link its configuration docs; the page moved between versions
// (1.8.7: consul.io/docs/agent/options.html, today: developer.hashicorp.com), the anchor did not.
std::string WithDocsBase(const std::string& text) {
  return absl::StrReplaceAll(
      text, {{"https://www.consul.io/docs/agent/options.html#", "<docs>#"},
             {"https://developer.hashicorp.com/docs/agent/config/config-files#", "<docs>#"}});
}

bool IsIndexField(const std::string& name) {
  return name == "CreateIndex" || name == "ModifyIndex" || name == "Index";
}

}  // namespace

std::string Normalizer::Index(uint64_t index) {
  if (index == 0) return "0";
  auto [it, added] = indexes_.emplace(index, static_cast<int>(indexes_.size()) + 1);
  return absl::StrCat("<i", it->second, ">");
}

std::string Normalizer::Replace(const std::string& text) {
  std::string out;
  for (size_t at = 0; at < text.size();) {
    const size_t length = UuidAt(text, at);
    if (length == 0) {
      out.push_back(text[at++]);
      continue;
    }
    auto [entry, added] =
        sessions_.emplace(text.substr(at, length), static_cast<int>(sessions_.size()) + 1);
    absl::StrAppend(&out, "<s", entry->second, ">");
    at += length;
  }
  return out;
}

void Normalizer::Walk(nlohmann::ordered_json* json) {
  if (json->is_array()) {
    for (auto& item : *json) Walk(&item);
  } else if (json->is_object()) {
    for (auto& [name, value] : json->items()) {
      if (IsIndexField(name) && value.is_number_unsigned()) {
        value = Index(value.get<uint64_t>());
      } else {
        Walk(&value);
      }
    }
  } else if (json->is_string()) {
    *json = Replace(json->get<std::string>());
  }
}

std::string Normalizer::Describe(const integration::HttpReply& reply) {
  std::vector<std::pair<std::string, std::string>> headers = reply.headers;
  std::sort(headers.begin(), headers.end());
  std::string out = absl::StrCat(reply.status, "\n");
  for (auto& [name, value] : headers) {
    uint64_t index = 0;
    if (name == "Date" || name == "Content-Length") {
      value = "*";
    } else if (name == "X-Consul-Index" && absl::SimpleAtoi(value, &index)) {
      value = Index(index);
    }
    absl::StrAppend(&out, name, ": ", Replace(value), "\n");
  }
  out.push_back('\n');
  nlohmann::ordered_json json =
      nlohmann::ordered_json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || reply.body.empty()) return out + Replace(WithDocsBase(reply.body));
  Walk(&json);
  return out + json.dump(2);
}

}  // namespace registry::differential

// integration/differential/normalize.cc
#include "integration/differential/normalize.h"

#include <algorithm>
#include <regex>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace registry::differential {
namespace {

const std::regex& UuidPattern() {
  static const std::regex* pattern =
      new std::regex("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  return *pattern;
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

std::string Normalizer::Replace(std::string text) {
  std::string out;
  auto begin = std::sregex_iterator(text.begin(), text.end(), UuidPattern());
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    out.append(text, last, it->position() - last);
    auto [entry, added] = sessions_.emplace(it->str(), static_cast<int>(sessions_.size()) + 1);
    absl::StrAppend(&out, "<s", entry->second, ">");
    last = it->position() + it->length();
  }
  out.append(text, last);
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

std::string Normalizer::Describe(const WireReply& reply) {
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
  if (json.is_discarded() || reply.body.empty()) return out + Replace(reply.body);
  Walk(&json);
  return out + json.dump(2);
}

}  // namespace registry::differential

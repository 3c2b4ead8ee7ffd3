// SPDX-License-Identifier: Apache-2.0
// repository/key_space.cc
#include "repository/key_space.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "base/go_print.h"
#include "base/status_text.h"
#include "base/utf8.h"

namespace registry {
namespace {

bool IsControl(char c) {
  const unsigned char u = static_cast<unsigned char>(c);
  return u < 0x20 || u == 0x7f;
}

// The first code point of valid UTF-8 `text` that Go's unicode.IsPrint refuses (go_print.h).
std::optional<char32_t> FirstUnprintable(absl::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t length = Utf8SequenceLength(text, i);
    const char32_t rune = DecodeUtf8Rune(text, i, length);
    if (!GoIsPrint(rune)) return rune;
    i += length;
  }
  return std::nullopt;
}

bool IsBadSegment(absl::string_view segment) {
  return segment.empty() || segment == "." || segment == "..";
}

// Checks what keys and namespaces share; `what` is "key" or "namespace".
absl::Status CheckCommon(absl::string_view text, absl::string_view what) {
  if (std::any_of(text.begin(), text.end(), IsControl)) {
    return absl::InvalidArgumentError(absl::StrCat("invalid ", what, " '",
                                                   absl::CHexEscape(Abbreviated(text)),
                                                   "': contains a control character"));
  }
  // Consul's JSON turns invalid bytes into U+FFFD, so such a key would come back from a listing
  // or a watch as a different key, which Get could not find.
  if (!IsValidUtf8(text)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid ", what, " '", absl::CHexEscape(Abbreviated(text)), "': not valid UTF-8"));
  }
  if (std::optional<char32_t> rune = FirstUnprintable(text)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "invalid %s '%s': contains U+%04X, which is not printable: Consul refuses it in a URL "
        "path, so the key could be written but never read",
        what, absl::CHexEscape(Abbreviated(text)), static_cast<uint32_t>(*rune)));
  }
  if (text.front() == ' ' || text.back() == ' ') {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid ", what, " '", Abbreviated(text), "': starts or ends with a space"));
  }
  return absl::OkStatus();
}

absl::Status CheckSegments(absl::string_view path, absl::string_view full, absl::string_view what) {
  for (absl::string_view segment : absl::StrSplit(path, '/')) {
    if (IsBadSegment(segment)) {
      return absl::InvalidArgumentError(absl::StrCat("invalid ", what, " '", Abbreviated(full),
                                                     "': segment '", Abbreviated(segment),
                                                     "' is empty, '.' or '..'"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateRepositoryKey(absl::string_view key, RootKey root) {
  if (key.empty()) return absl::InvalidArgumentError("invalid key '': empty");
  if (absl::Status status = CheckCommon(key, "key"); !status.ok()) return status;
  if (key.front() != '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid key '", Abbreviated(key), "': does not start with '/'"));
  }
  if (key == "/") {
    if (root == RootKey::kAllowed) return absl::OkStatus();
    return absl::InvalidArgumentError("invalid key '/': the root is not allowed here");
  }
  return CheckSegments(key.substr(1), key, "key");
}

absl::Status ValidateNamespace(absl::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("invalid namespace '': empty");
  if (absl::Status status = CheckCommon(name, "namespace"); !status.ok()) return status;
  return CheckSegments(name, name, "namespace");
}

KeySpace::KeySpace(std::string namespace_name) : namespace_name_(std::move(namespace_name)) {}

absl::StatusOr<KeySpace> KeySpace::Create(absl::string_view namespace_name) {
  if (absl::Status status = ValidateNamespace(namespace_name); !status.ok()) return status;
  return KeySpace(std::string(namespace_name));
}

std::string KeySpace::ConsulKey(absl::string_view key) const {
  return absl::StrCat(namespace_name_, key);
}

std::string KeySpace::TreePrefix(absl::string_view key) const {
  if (key == "/") return absl::StrCat(namespace_name_, "/");
  return absl::StrCat(namespace_name_, key, "/");
}

std::optional<std::string> KeySpace::RepositoryKey(absl::string_view consul_key) const {
  if (!absl::StartsWith(consul_key, namespace_name_)) return std::nullopt;
  absl::string_view key = consul_key.substr(namespace_name_.size());
  if (!ValidateRepositoryKey(key).ok()) return std::nullopt;
  return std::string(key);
}

std::vector<std::string> ChildNames(absl::string_view prefix,
                                    const std::vector<std::string>& listed_keys) {
  std::vector<std::string> names;
  names.reserve(listed_keys.size());
  for (absl::string_view listed : listed_keys) {
    if (!absl::ConsumePrefix(&listed, prefix)) continue;
    absl::string_view name = listed.substr(0, listed.find('/'));
    if (IsBadSegment(name)) continue;
    names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace registry

// SPDX-License-Identifier: Apache-2.0
// tools/ctl_backup_file.cc
#include "tools/ctl_backup_file.h"

#include <exception>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/base64.h"
#include "nlohmann/json.hpp"

namespace registry::tools {
namespace {

constexpr char kHex[] = "0123456789abcdef";

// The length of the valid UTF-8 sequence at the start of `s` (1 to 4), or 0 if there is none.
size_t Utf8Length(absl::string_view s) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const auto continuation = [&](size_t i) { return i < s.size() && (byte(i) & 0xC0) == 0x80; };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  if (b0 >= 0xC2 && b0 <= 0xDF) return continuation(1) ? 2 : 0;
  if (b0 >= 0xE0 && b0 <= 0xEF) {
    if (!continuation(1) || !continuation(2)) return 0;
    if (b0 == 0xE0 && byte(1) < 0xA0) return 0;   // overlong
    if (b0 == 0xED && byte(1) >= 0xA0) return 0;  // a surrogate
    return 3;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4) {
    if (!continuation(1) || !continuation(2) || !continuation(3)) return 0;
    if (b0 == 0xF0 && byte(1) < 0x90) return 0;   // overlong
    if (b0 == 0xF4 && byte(1) >= 0x90) return 0;  // past U+10FFFF
    return 4;
  }
  return 0;
}

absl::Status EntryError(size_t index, absl::string_view key, absl::string_view what,
                        KvFileFault* fault) {
  if (fault != nullptr) *fault = {index, std::string(key)};
  return absl::InvalidArgumentError(absl::StrCat(EntryName(index, key), ": ", what));
}

// One element of the file's array as an entry.
absl::StatusOr<KvFileEntry> ParseEntry(size_t index, const nlohmann::json& element,
                                       KvFileFault* fault) {
  if (!element.is_object()) {
    return EntryError(index, "",
                      absl::StrCat("is a JSON ", element.type_name(),
                                   ", not an object {\"key\", \"flags\", \"value\"}"),
                      fault);
  }
  KvFileEntry entry;
  const auto key = element.find("key");
  if (key == element.end() || !key->is_string()) {
    return EntryError(index, "", "has no \"key\" string", fault);
  }
  entry.key = key->get<std::string>();
  if (const auto flags = element.find("flags"); flags != element.end()) {
    if (!flags->is_number_unsigned()) {
      return EntryError(
          index, entry.key,
          absl::StrCat("\"flags\" is ", flags->dump(), ", not an unsigned 64-bit integer"), fault);
    }
    entry.flags = flags->get<uint64_t>();
  }
  const auto value = element.find("value");
  if (value == element.end() || !value->is_string()) {
    return EntryError(index, entry.key, "has no \"value\" string (the value in base64)", fault);
  }
  if (!DecodeBase64(value->get_ref<const std::string&>(), &entry.value)) {
    return EntryError(index, entry.key,
                      "\"value\" is not standard base64 (A-Z, a-z, 0-9, '+', '/', padded with "
                      "'=' to a multiple of 4 characters)",
                      fault);
  }
  return entry;
}

}  // namespace

std::string EntryName(size_t index, absl::string_view key) {
  // Escaped: a key may hold control characters (a NUL, a terminal escape) that must not reach
  // the terminal as they are.
  return key.empty() ? absl::StrCat("entry .[", index, "]")
                     : absl::StrCat("entry .[", index, "] '", absl::CHexEscape(key), "'");
}

std::string GoJsonString(absl::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out.push_back('"');
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out.append("\\\"");
          break;
        case '\\':
          out.append("\\\\");
          break;
        case '\n':
          out.append("\\n");
          break;
        case '\r':
          out.append("\\r");
          break;
        case '\t':
          out.append("\\t");
          break;
        case '<':
        case '>':
        case '&':
          out.append("\\u00").push_back(kHex[c >> 4]);
          out.push_back(kHex[c & 0xF]);
          break;
        default:
          if (c < 0x20) {
            out.append("\\u00").push_back(kHex[c >> 4]);
            out.push_back(kHex[c & 0xF]);
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    const size_t length = Utf8Length(text.substr(i));
    if (length == 0) {
      out.append("\\ufffd");  // Go replaces each invalid byte
      ++i;
      continue;
    }
    const absl::string_view rune = text.substr(i, length);
    if (rune == "\xE2\x80\xA8") {
      out.append("\\u2028");
    } else if (rune == "\xE2\x80\xA9") {
      out.append("\\u2029");
    } else {
      out.append(rune.data(), rune.size());
    }
    i += length;
  }
  out.push_back('"');
  return out;
}

bool DecodeBase64(absl::string_view encoded, std::string* decoded) {
  decoded->clear();
  if (encoded.size() % 4 != 0) return false;
  decoded->reserve(encoded.size() / 4 * 3);
  for (size_t i = 0; i < encoded.size(); i += 4) {
    const bool last = i + 4 == encoded.size();
    int digits[4];
    int padding = 0;
    for (int j = 0; j < 4; ++j) {
      const char c = encoded[i + j];
      if (c == '=' && last && j >= 2) {
        ++padding;
        digits[j] = 0;
        continue;
      }
      if (padding > 0) return false;  // a digit after '='
      digits[j] = Base64Digit(c);
      if (digits[j] < 0) return false;
    }
    const uint32_t bits =
        (static_cast<uint32_t>(digits[0]) << 18) | (static_cast<uint32_t>(digits[1]) << 12) |
        (static_cast<uint32_t>(digits[2]) << 6) | static_cast<uint32_t>(digits[3]);
    decoded->push_back(static_cast<char>((bits >> 16) & 0xFF));
    if (padding < 2) decoded->push_back(static_cast<char>((bits >> 8) & 0xFF));
    if (padding < 1) decoded->push_back(static_cast<char>(bits & 0xFF));
  }
  return true;
}

std::string FormatKvFile(const std::vector<KvFileEntry>& entries) {
  if (entries.empty()) return "[]\n";
  std::string out = "[\n";
  for (size_t i = 0; i < entries.size(); ++i) {
    const KvFileEntry& entry = entries[i];
    absl::StrAppend(&out, "\t{\n\t\t\"key\": ", GoJsonString(entry.key),
                    ",\n\t\t\"flags\": ", entry.flags, ",\n\t\t\"value\": \"",
                    absl::Base64Escape(entry.value), "\"\n\t}",
                    i + 1 < entries.size() ? ",\n" : "\n");
  }
  out.append("]\n");
  return out;
}

absl::StatusOr<std::vector<KvFileEntry>> ParseKvFile(absl::string_view text, KvFileFault* fault) {
  if (fault != nullptr) *fault = {};
  if (text.empty()) return absl::InvalidArgumentError("the file is empty: no JSON in it");
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error& error) {
    // `byte` is 1-based: past the last byte means the text stopped before its JSON did.
    if (error.byte >= text.size()) {
      return absl::InvalidArgumentError(absl::StrCat("the file ends inside its JSON, after ",
                                                     text.size(), " bytes: it looks truncated (",
                                                     error.what(), ")"));
    }
    return absl::InvalidArgumentError(absl::StrCat("not JSON: ", error.what()));
  } catch (const std::exception& error) {
    return absl::InvalidArgumentError(absl::StrCat("not JSON: ", error.what()));
  }
  if (!document.is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the file holds a JSON ", document.type_name(),
                     ", not an array of {\"key\", \"flags\", \"value\"} objects as "
                     "`consul kv export` and `registryctl export` write"));
  }
  std::vector<KvFileEntry> entries;
  entries.reserve(document.size());
  for (size_t i = 0; i < document.size(); ++i) {
    absl::StatusOr<KvFileEntry> entry = ParseEntry(i, document[i], fault);
    if (!entry.ok()) return entry.status();
    entries.push_back(*std::move(entry));
  }
  return entries;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ToRepositoryEntries(
    std::vector<KvFileEntry> entries, absl::string_view store_prefix, KvFileFault* fault) {
  if (fault != nullptr) *fault = {};
  absl::flat_hash_map<absl::string_view, size_t> first_index;
  first_index.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const KvFileEntry& entry = entries[i];
    if (!absl::StartsWith(entry.key, store_prefix)) {
      return EntryError(
          i, entry.key,
          absl::StrCat("is outside this namespace, whose keys start with '", store_prefix, "'"),
          fault);
    }
    if (entry.key.size() == store_prefix.size()) {
      return EntryError(i, entry.key, "is the namespace's own folder, not a key in it", fault);
    }
    if (absl::EndsWith(entry.key, "/")) {
      return EntryError(i, entry.key,
                        "is a folder key (it ends with '/'): lock state or a folder made in "
                        "Consul's UI, which no repository key names; leave it out of the file",
                        fault);
    }
    if (entry.flags != 0) {
      return EntryError(i, entry.key,
                        absl::StrCat("has flags ", entry.flags,
                                     ", which import would lose (the repository writes values "
                                     "with flags 0): set them to 0 in the file, or restore "
                                     "this key with `consul kv import`"),
                        fault);
    }
    const auto [previous, inserted] = first_index.emplace(entry.key, i);
    if (!inserted) {
      return EntryError(
          i, entry.key,
          absl::StrCat("comes twice in the file (first as entry .[", previous->second, "])"),
          fault);
    }
  }
  std::vector<std::pair<std::string, std::string>> mapped;
  mapped.reserve(entries.size());
  for (KvFileEntry& entry : entries) {
    mapped.emplace_back(absl::StrCat("/", absl::string_view(entry.key).substr(store_prefix.size())),
                        std::move(entry.value));
  }
  return mapped;
}

}  // namespace registry::tools

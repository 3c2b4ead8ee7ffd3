// SPDX-License-Identifier: Apache-2.0
// tools/ctl_backup_file.h
//
// The backup files of `registryctl export` and `registryctl import`, in `consul kv export`'s
// format, so that either tool reads the other's files: a JSON array of objects
//   {"key": "<the store's key, namespace included>", "flags": <uint64>, "value": "<base64>"}
// Written exactly as Consul's CLI writes it (Go's json.MarshalIndent with a tab: one member per
// line, Go's escapes), so that the two tools' dumps of the same keys are the same bytes. Values
// are raw bytes both ways (standard base64 with padding), whatever they hold.
//
// Thread safety: pure functions.
#ifndef REGISTRY_TOOLS_CTL_BACKUP_FILE_H_
#define REGISTRY_TOOLS_CTL_BACKUP_FILE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace registry::tools {

// One entry of a backup file.
struct KvFileEntry {
  std::string key;  // the store's key, e.g. "registry/metadata/db"
  uint64_t flags = 0;
  std::string value;  // raw bytes (base64 in the file)

  friend bool operator==(const KvFileEntry&, const KvFileEntry&) = default;
};

// `entries` as `consul kv export` prints them, final newline included ("[]\n" when empty).
std::string FormatKvFile(const std::vector<KvFileEntry>& entries);

// `text` as JSON in a string, escaped as Go's encoding/json does (HTML-safe: <, > and & as
// \u003c, \u003e, \u0026; U+2028 and U+2029 escaped; invalid UTF-8 as \ufffd).
std::string GoJsonString(absl::string_view text);

// Decodes standard base64 with padding, as Go's base64.StdEncoding does; false for anything else.
bool DecodeBase64(absl::string_view encoded, std::string* decoded);

// Where a file is at fault: the entry's index (0-based, as jq's .[i]) and key, when one is.
struct KvFileFault {
  static constexpr size_t kNoEntry = static_cast<size_t>(-1);
  size_t index = kNoEntry;
  std::string key;  // "" when unknown
};

// Parses a backup file: a JSON array of objects, each with a string "key", a string "value" in
// base64 and optionally "flags", an unsigned 64-bit integer (0 when absent); other members are
// ignored, as Consul's CLI ignores them. Errors: InvalidArgument saying what is wrong (a text
// that ends inside its JSON says it looks truncated); for a bad entry, `*fault` (when not null)
// gets its index and key, and the message starts with "entry .[i]".
absl::StatusOr<std::vector<KvFileEntry>> ParseKvFile(absl::string_view text,
                                                     KvFileFault* fault = nullptr);

// The entries of a parsed file as repository entries ("/a/b" = value) of the namespace whose
// store keys start with `store_prefix` (the plugin's store_key_prefix, "ns/"). Every entry is
// checked before any is mapped: its key must start with `store_prefix` and name a key below it
// (not the prefix itself, not a folder key ending in '/', which is lock state or a folder of
// Consul's UI, not a repository key), its flags must be 0 (the repository writes values only) and
// no key may come twice. Errors: InvalidArgument naming the first bad entry by index and key,
// which `*fault` (when not null) gets too.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> ToRepositoryEntries(
    std::vector<KvFileEntry> entries, absl::string_view store_prefix, KvFileFault* fault = nullptr);

// "entry .[i] 'key'": how messages name an entry.
std::string EntryName(size_t index, absl::string_view key);

}  // namespace registry::tools

#endif  // REGISTRY_TOOLS_CTL_BACKUP_FILE_H_

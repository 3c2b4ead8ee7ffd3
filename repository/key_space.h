// SPDX-License-Identifier: Apache-2.0
// repository/key_space.h
//
// KeySpace maps repository keys ("/a/b") to Consul keys under one namespace ("ns/a/b") and back,
// and validates both. It is the only place that knows the layout, so namespace isolation rests
// on it: every Consul key or prefix it produces for namespace "ns" starts with "ns/", which no
// key of namespace "ns2" does, and a subtree prefix always ends with '/', so the tree of "/a"
// never contains "/ab".
//
// A valid key is valid UTF-8, starts with '/', has no empty, "." or ".." segment (so no
// trailing '/'), no control characters nor any other code point Go's unicode.IsPrint refuses
// (Consul refuses those in a URL path: base/go_print.h) and no leading or trailing spaces. "/"
// alone is the root: valid only where a caller allows it (GetChildrenKeys, Delete).
//
// Thread safety: immutable after construction; pure functions.
#ifndef REPOSITORY_KEY_SPACE_H_
#define REPOSITORY_KEY_SPACE_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace registry {

enum class RootKey { kRejected, kAllowed };

// OK if `key` is a valid repository key; else InvalidArgument quoting the key and saying why.
absl::Status ValidateRepositoryKey(absl::string_view key, RootKey root = RootKey::kRejected);

// OK if `name` is a valid namespace: non-empty '/'-separated segments, none empty, "." or "..",
// valid UTF-8, no control characters nor other unprintable code points, no leading or trailing
// spaces. Else InvalidArgument naming
// it.
absl::Status ValidateNamespace(absl::string_view name);

class KeySpace {
 public:
  // `namespace_name` must satisfy ValidateNamespace (use Create to check it).
  explicit KeySpace(std::string namespace_name);

  static absl::StatusOr<KeySpace> Create(absl::string_view namespace_name);

  const std::string& namespace_name() const { return namespace_name_; }

  // The Consul key of a valid, non-root repository key: "/a/b" -> "ns/a/b".
  std::string ConsulKey(absl::string_view key) const;

  // The Consul prefix of everything below a valid key, root included: "/a" -> "ns/a/",
  // "/" -> "ns/". Always ends with '/'.
  std::string TreePrefix(absl::string_view key) const;

  // The repository key of a Consul key, or nullopt if it is not inside this namespace or does
  // not map back to a valid key ("ns/a/b" -> "/a/b"; "ns2/a", "ns/" and "ns/a//b" -> nullopt).
  std::optional<std::string> RepositoryKey(absl::string_view consul_key) const;

 private:
  std::string namespace_name_;
};

// Extracts the direct child names from the answer of a `?keys&separator=/` listing of `prefix`
// (which ends with '/'): strips the prefix and the trailing separator, drops entries outside
// the prefix and empty names, and returns the rest sorted without duplicates.
// {"ns/a/b", "ns/a/c/", "ns/a/c/"} under "ns/a/" -> {"b", "c"}.
std::vector<std::string> ChildNames(absl::string_view prefix,
                                    const std::vector<std::string>& listed_keys);

}  // namespace registry

#endif  // REPOSITORY_KEY_SPACE_H_

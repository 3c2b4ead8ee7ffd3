// SPDX-License-Identifier: Apache-2.0
// conf/props.h
//
// PropsBuilder applies repository props one key at a time onto a RegistryConfig, so the YAML
// `props:` block, the C ABI's props map and CLI overrides share one set of keys and one
// validation. Internal to conf/; the public API is conf/registry_config.h.
//
// Thread safety: a PropsBuilder is not thread-safe; use one per parse.
#ifndef REGISTRY_CONF_PROPS_H_
#define REGISTRY_CONF_PROPS_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "conf/registry_config.h"

namespace registry::conf {

// Returns "<block>: unknown key '<key>'[, did you mean '<closest>'?]<where>" as InvalidArgument.
absl::Status UnknownKeyError(absl::string_view block, absl::string_view key,
                             const std::vector<std::string>& known, absl::string_view where);

// Formats a location for error messages: " (line N)" for a 1-based line, "" for line <= 0.
std::string AtLine(int line);

class PropsBuilder {
 public:
  // Which keys Set() accepts besides the repository props.
  enum class Keys {
    kProps,            // a YAML props: block
    kPropsAndModeKeys  // a flat map that also carries "type" and "overwrite"
  };

  // Starts from `start` (defaults, or the config an override modifies). Relative tokenFile and
  // TLS file paths are resolved against `base_dir` ("" keeps them relative to the working
  // directory).
  PropsBuilder(RegistryConfig start, std::string base_dir, Keys keys);

  // Applies `key` = `value`. Errors are InvalidArgument (NotFound/PermissionDenied for an
  // unreadable tokenFile or TLS file), formatted "<key>: '<value>' <problem><where>"; the
  // token's value is never included. A key may be set once per builder.
  absl::Status Set(absl::string_view key, absl::string_view value, absl::string_view where);

  // Returns the config once the required props (namespace, server-lists) are present; `where`
  // locates the props block for "missing" errors.
  absl::StatusOr<RegistryConfig> Finish(absl::string_view where) &&;

  // Every key Set() accepts, for "did you mean" hints.
  const std::vector<std::string>& KnownKeys() const;

 private:
  // Applies a known key; the message of an error describes only the value.
  absl::Status Apply(absl::string_view key, absl::string_view value);
  // Reads the file a prop names, resolved against base_dir_ into `*path`; errors quote `value`.
  absl::StatusOr<std::string> ReadPropFile(absl::string_view value, std::string* path) const;
  // The resolved path of the PEM file `value` names, checked readable and not blank; "" for "".
  absl::StatusOr<std::string> PemFile(absl::string_view value) const;
  // The rules between the TLS props: certificate and key together, and no TLS prop without an
  // https:// server.
  absl::Status CheckTls(absl::string_view where) const;

  RegistryConfig config_;
  const std::string base_dir_;
  const Keys keys_;
  absl::flat_hash_set<std::string> seen_;
};

}  // namespace registry::conf

#endif  // REGISTRY_CONF_PROPS_H_

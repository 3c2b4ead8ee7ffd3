// SPDX-License-Identifier: Apache-2.0
// host/c_string_args.cc
#include "host/c_string_args.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "base/status_text.h"

namespace registry::plugin {
namespace {

bool HoldsNul(absl::string_view value) { return value.find('\0') != absl::string_view::npos; }

// InvalidArgument naming `what` and `value` (escaped and Abbreviated).
absl::Status NulError(absl::string_view value, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(what, " \"", absl::CHexEscape(Abbreviated(value)),
                   "\" holds a NUL character, which the plugin's C interface cannot carry"));
}

}  // namespace

absl::StatusOr<std::string> CStringArgument(absl::string_view value, absl::string_view what) {
  if (!HoldsNul(value)) return std::string(value);
  return NulError(value, what);
}

absl::Status CheckCStringKeys(const std::vector<std::pair<std::string, std::string>>& entries,
                              absl::string_view what, size_t* bad_index) {
  for (size_t i = 0; i < entries.size(); ++i) {
    if (!HoldsNul(entries[i].first)) continue;
    if (bad_index != nullptr) *bad_index = i;
    return NulError(entries[i].first, what);
  }
  return absl::OkStatus();
}

absl::Status CheckCStringProps(const std::vector<std::pair<std::string, std::string>>& props) {
  for (const auto& [name, value] : props) {
    if (HoldsNul(name)) return NulError(name, "prop name");
    if (HoldsNul(value)) return NulError(value, absl::StrCat("value of prop '", name, "'"));
  }
  return absl::OkStatus();
}

}  // namespace registry::plugin

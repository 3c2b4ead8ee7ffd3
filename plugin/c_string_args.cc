// SPDX-License-Identifier: Apache-2.0
// plugin/c_string_args.cc
#include "plugin/c_string_args.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace registry::plugin {
namespace {

// How much of a refused value an error shows: enough to recognise it, never a whole 100 KB key.
constexpr size_t kShown = 200;

bool HoldsNul(absl::string_view value) { return value.find('\0') != absl::string_view::npos; }

// InvalidArgument naming `what` and `value` (escaped, at most kShown bytes of it).
absl::Status NulError(absl::string_view value, absl::string_view what) {
  const std::string shown = value.size() > kShown
                                ? absl::StrCat("\"", absl::CHexEscape(value.substr(0, kShown)),
                                               "\"... (", value.size(), " bytes)")
                                : absl::StrCat("\"", absl::CHexEscape(value), "\"");
  return absl::InvalidArgumentError(absl::StrCat(
      what, " ", shown, " holds a NUL character, which the plugin's C interface cannot carry"));
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

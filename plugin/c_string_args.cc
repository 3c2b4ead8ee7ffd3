// SPDX-License-Identifier: Apache-2.0
// plugin/c_string_args.cc
#include "plugin/c_string_args.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace registry::plugin {
namespace {

// How much of a refused value an error shows: enough to recognise it, never a whole 100 KB key.
constexpr size_t kShown = 200;

}  // namespace

absl::StatusOr<std::string> CStringArgument(absl::string_view value, absl::string_view what) {
  if (value.find('\0') == absl::string_view::npos) return std::string(value);
  const std::string shown = value.size() > kShown
                                ? absl::StrCat("\"", absl::CHexEscape(value.substr(0, kShown)),
                                               "\"... (", value.size(), " bytes)")
                                : absl::StrCat("\"", absl::CHexEscape(value), "\"");
  return absl::InvalidArgumentError(absl::StrCat(
      what, " ", shown, " holds a NUL character, which the plugin's C interface cannot carry"));
}

absl::Status CheckCStringKeys(const std::vector<std::pair<std::string, std::string>>& entries,
                              absl::string_view what, size_t* bad_index) {
  for (size_t i = 0; i < entries.size(); ++i) {
    absl::StatusOr<std::string> key = CStringArgument(entries[i].first, what);
    if (!key.ok()) {
      if (bad_index != nullptr) *bad_index = i;
      return key.status();
    }
  }
  return absl::OkStatus();
}

absl::Status CheckCStringProps(const std::vector<std::pair<std::string, std::string>>& props) {
  for (const auto& [name, value] : props) {
    if (absl::Status s = CStringArgument(name, "prop name").status(); !s.ok()) return s;
    absl::Status checked =
        CStringArgument(value, absl::StrCat("value of prop '", name, "'")).status();
    if (!checked.ok()) return checked;
  }
  return absl::OkStatus();
}

}  // namespace registry::plugin

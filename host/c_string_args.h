// SPDX-License-Identifier: Apache-2.0
// host/c_string_args.h
//
// The C ABI takes keys, lock names, props and paths as NUL-terminated strings, so a NUL inside
// one would cut it short and the plugin would act on another key than the caller's ("/k\0evil"
// becomes "/k"). The host side refuses such a string before it reaches the ABI, naming it.
//
// Thread safety: pure functions.
#ifndef HOST_C_STRING_ARGS_H_
#define HOST_C_STRING_ARGS_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace registry::plugin {

// `value` as a string to pass as a C string, or InvalidArgument naming `what` and the value
// (escaped, at most 200 characters shown) if it holds a NUL character.
absl::StatusOr<std::string> CStringArgument(absl::string_view value, absl::string_view what);

// OK, or the error of CStringArgument for the first entry whose key holds a NUL character, with
// its index in `*bad_index` (when not null).
absl::Status CheckCStringKeys(const std::vector<std::pair<std::string, std::string>>& entries,
                              absl::string_view what, size_t* bad_index);

// OK, or the error of CStringArgument for the first prop whose name or value holds a NUL.
absl::Status CheckCStringProps(const std::vector<std::pair<std::string, std::string>>& props);

}  // namespace registry::plugin

#endif  // HOST_C_STRING_ARGS_H_

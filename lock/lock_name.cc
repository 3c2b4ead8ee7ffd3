// SPDX-License-Identifier: Apache-2.0
// lock/lock_name.cc
#include "lock/lock_name.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "base/status_text.h"

namespace registry::lock {
namespace {

absl::Status NameError(absl::string_view name, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid lock name '", absl::CHexEscape(Abbreviated(name)), "': ", why));
}

}  // namespace

absl::Status ValidateLockName(absl::string_view name) {
  if (name.size() > kMaxLockNameBytes) {
    return NameError(name,
                     absl::StrCat("longer than ", kMaxLockNameBytes, " bytes (", name.size(), ")"));
  }
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) return NameError(name, "contains a control character");
  }
  if (!name.empty() && (name.front() == ' ' || name.back() == ' ')) {
    return NameError(name, "starts or ends with a space");
  }
  absl::string_view path = name;
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  if (path.empty()) return NameError(name, "empty");
  for (absl::string_view segment : absl::StrSplit(path, '/')) {
    if (segment.empty() || segment == "." || segment == "..") {
      return NameError(name, absl::StrCat("segment '", segment, "' is empty, '.' or '..'"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> CanonicalLockName(absl::string_view name) {
  if (absl::Status status = ValidateLockName(name); !status.ok()) return status;
  if (name.front() == '/') name.remove_prefix(1);
  return std::string(name);
}

std::string LockConsulKey(const KeySpace& space, absl::string_view canonical) {
  return absl::StrCat(space.TreePrefix("/lock"), canonical, "/");
}

std::string FairLockOwnerKey(const KeySpace& space, absl::string_view canonical) {
  return absl::StrCat(space.TreePrefix("/fair-lock"), canonical, "/");
}

std::string FairLockQueuePrefix(const KeySpace& space, absl::string_view canonical) {
  return absl::StrCat(space.TreePrefix("/fair-queue"), canonical, "/");
}

std::string SemaphorePrefix(const KeySpace& space, absl::string_view canonical) {
  return absl::StrCat(space.TreePrefix("/semaphore"), canonical, "/");
}

std::string RwLockPrefix(const KeySpace& space, absl::string_view canonical) {
  return absl::StrCat(space.TreePrefix("/rwlock"), canonical, "/");
}

}  // namespace registry::lock

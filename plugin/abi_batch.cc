// SPDX-License-Identifier: Apache-2.0
// plugin/abi_batch.cc
//
// The 1.7 entry persist_batch: many persistent keys in as few store transactions as the store
// accepts (registry::Repository::PersistBatch); and the 1.8 entry check_batch, its checks alone
// (registry::Repository::CheckBatch).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "plugin/abi_internal.h"

namespace registry::plugin::internal {
namespace {

// The C arrays as entries; every pointer checked, every value as ValueView takes it. `entry`
// names the calling entry in messages; `*bad` (when not null) gets the index of an entry at fault,
// and is left alone otherwise.
absl::StatusOr<std::vector<Repository::KeyValue>> CopyEntries(const char* entry,
                                                              const char* const* keys,
                                                              const char* const* values,
                                                              const size_t* value_lens,
                                                              size_t count, size_t* bad = nullptr) {
  std::vector<Repository::KeyValue> entries;
  if (count == 0) return entries;
  if (keys == nullptr) return NullArgument("keys");
  if (values == nullptr) return NullArgument("values");
  if (value_lens == nullptr) return NullArgument("value_lens");
  entries.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    if (keys[i] == nullptr) {
      if (bad != nullptr) *bad = i;
      return absl::InvalidArgumentError(
          absl::StrCat("registry plugin: ", entry, ": keys[", i, "] is NULL"));
    }
    absl::StatusOr<absl::string_view> value = ValueView(keys[i], values[i], value_lens[i]);
    if (!value.ok()) {
      if (bad != nullptr) *bad = i;
      return value.status();
    }
    entries.emplace_back(keys[i], std::string(*value));
  }
  return entries;
}

}  // namespace

int PersistBatch(RegistryRepository* repository, const char* const* keys, const char* const* values,
                 const size_t* value_lens, size_t count, size_t* written,
                 RegistryError* error) noexcept {
  if (written != nullptr) *written = 0;
  return Guarded(error, [&]() -> absl::Status {
    if (repository == nullptr || repository->impl == nullptr) return NullArgument("repository");
    ASSIGN_OR_RETURN(std::vector<Repository::KeyValue> entries,
                     CopyEntries("persist_batch", keys, values, value_lens, count));
    return repository->impl->PersistBatch(entries, written);
  });
}

int CheckBatch(RegistryRepository* repository, const char* const* keys, const char* const* values,
               const size_t* value_lens, size_t count, size_t* bad_index,
               RegistryError* error) noexcept {
  size_t bad = count;  // no entry's fault (a NULL array or repository) leaves it at count
  const int code = Guarded(error, [&]() -> absl::Status {
    if (repository == nullptr || repository->impl == nullptr) return NullArgument("repository");
    ASSIGN_OR_RETURN(std::vector<Repository::KeyValue> entries,
                     CopyEntries("check_batch", keys, values, value_lens, count, &bad));
    return repository->impl->CheckBatch(entries, &bad);
  });
  if (bad_index != nullptr) *bad_index = code == REGISTRY_OK || bad > count ? count : bad;
  return code;
}

}  // namespace registry::plugin::internal

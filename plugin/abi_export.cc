// SPDX-License-Identifier: Apache-2.0
// plugin/abi_export.cc
//
// The 1.8 entries list_entries and store_key_prefix: a subtree's keys as the store holds them
// (registry::Repository::ListEntries) and the store's name of the namespace root
// (Repository::StoreKeyPrefix), what `registryctl export` and `import` need beyond get and
// persist_batch. check_batch, the other 1.8 entry, is in abi_batch.cc.
#include <string>
#include <vector>

#include "base/status_macros.h"
#include "plugin/abi_internal.h"

namespace registry::plugin::internal {

int ListEntries(RegistryRepository* repository, const char* key, RegistryEntryCallback visit,
                void* user_data, RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    if (repository == nullptr || repository->impl == nullptr) return NullArgument("repository");
    if (key == nullptr) return NullArgument("key");
    if (visit == nullptr) return NullArgument("visit");
    // The whole subtree first: nothing is visited when the read fails.
    ASSIGN_OR_RETURN(std::vector<Repository::StoredEntry> entries,
                     repository->impl->ListEntries(key));
    for (const Repository::StoredEntry& entry : entries) {
      RegistryEntry c_entry{};
      c_entry.struct_size = sizeof(RegistryEntry);
      c_entry.key = entry.key.c_str();
      c_entry.value = entry.value.c_str();  // NUL-terminated, as the contract promises
      c_entry.value_len = entry.value.size();
      c_entry.flags = entry.flags;
      c_entry.ephemeral = entry.ephemeral;
      visit(&c_entry, user_data);
    }
    return absl::OkStatus();
  });
}

int StoreKeyPrefix(RegistryRepository* repository, char** prefix, size_t* prefix_len,
                   RegistryError* error) noexcept {
  if (prefix != nullptr) *prefix = nullptr;
  if (prefix_len != nullptr) *prefix_len = 0;
  return Guarded(error, [&]() -> absl::Status {
    if (repository == nullptr || repository->impl == nullptr) return NullArgument("repository");
    if (prefix == nullptr) return NullArgument("prefix");
    if (prefix_len == nullptr) return NullArgument("prefix_len");
    ASSIGN_OR_RETURN(std::string store_prefix, repository->impl->StoreKeyPrefix());
    *prefix = CopyBytes(store_prefix);
    *prefix_len = store_prefix.size();
    return absl::OkStatus();
  });
}

}  // namespace registry::plugin::internal

// plugin/abi_batch.cc
//
// The 1.7 entry persist_batch: many persistent keys in as few store transactions as the store
// accepts (registry::Repository::PersistBatch).
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "plugin/abi_internal.h"

namespace registry::plugin::internal {
namespace {

// The C arrays as entries; every pointer checked, every value as ValueView takes it.
absl::StatusOr<std::vector<Repository::KeyValue>> CopyEntries(const char* const* keys,
                                                              const char* const* values,
                                                              const size_t* value_lens,
                                                              size_t count) {
  std::vector<Repository::KeyValue> entries;
  if (count == 0) return entries;
  if (keys == nullptr) return NullArgument("keys");
  if (values == nullptr) return NullArgument("values");
  if (value_lens == nullptr) return NullArgument("value_lens");
  entries.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    if (keys[i] == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("registry plugin: persist_batch: keys[", i, "] is NULL"));
    }
    absl::StatusOr<absl::string_view> value = ValueView(keys[i], values[i], value_lens[i]);
    if (!value.ok()) return value.status();
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
    absl::StatusOr<std::vector<Repository::KeyValue>> entries =
        CopyEntries(keys, values, value_lens, count);
    if (!entries.ok()) return entries.status();
    return repository->impl->PersistBatch(*entries, written);
  });
}

}  // namespace registry::plugin::internal

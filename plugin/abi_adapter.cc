// SPDX-License-Identifier: Apache-2.0
// plugin/abi_adapter.cc
#include "plugin/abi_adapter.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <optional>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "base/status_text.h"
#include "plugin/abi_entries.h"
#include "plugin/abi_internal.h"

namespace registry::plugin {
namespace internal {

int SetError(RegistryError* error, int code, const char* a, const char* b) noexcept {
  if (error == nullptr || error->message != nullptr) return code;
  const size_t len_a = std::strlen(a);
  const size_t len_b = std::strlen(b);
  char* message = static_cast<char*>(std::malloc(len_a + len_b + 1));
  if (message != nullptr) {
    std::memcpy(message, a, len_a);
    std::memcpy(message + len_a, b, len_b);
    message[len_a + len_b] = '\0';
  }
  error->code = code;
  error->message = message;
  return code;
}

absl::Status NullArgument(const char* name) {
  return absl::InvalidArgumentError(absl::StrCat("registry plugin: argument '", name, "' is NULL"));
}

absl::StatusOr<absl::string_view> ValueView(const char* key, const char* value, size_t value_len) {
  if (value == nullptr && value_len != 0) {
    return absl::InvalidArgumentError(absl::StrCat("registry plugin: value for key '",
                                                   Abbreviated(key), "' is NULL but value_len is ",
                                                   value_len));
  }
  return absl::string_view(value == nullptr ? "" : value, value_len);
}

char* CopyBytes(absl::string_view bytes) {
  char* copy = static_cast<char*>(std::malloc(bytes.size() + 1));
  if (copy == nullptr) throw std::bad_alloc();
  if (!bytes.empty()) std::memcpy(copy, bytes.data(), bytes.size());
  copy[bytes.size()] = '\0';
  return copy;
}

}  // namespace internal

namespace {

using internal::CopyBytes;
using internal::Guarded;
using internal::NullArgument;
using internal::SetError;
using internal::ValueView;

// Checks the handle and key common to every repository call.
absl::Status CheckKeyCall(const RegistryRepository* repository, const char* key) {
  if (repository == nullptr || repository->impl == nullptr) return NullArgument("repository");
  if (key == nullptr) return NullArgument("key");
  return absl::OkStatus();
}

// Copies `count` C string pairs; `what` names the arrays in messages ("override", "props").
absl::StatusOr<PropList> CopyProps(const char* const* keys, const char* const* values, size_t count,
                                   const char* what) {
  PropList props;
  if (count == 0) return props;
  if (keys == nullptr || values == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("registry plugin: ", what, " count is ", count,
                                                   " but the key or value array is NULL"));
  }
  props.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    if (keys[i] == nullptr || values[i] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("registry plugin: ", what, " #", i, " (",
                                                     keys[i] == nullptr ? "<NULL>" : keys[i],
                                                     ") has a NULL key or value"));
    }
    props.emplace_back(keys[i], values[i]);
  }
  return props;
}

absl::Status Publish(const PluginDescriptor& descriptor, absl::StatusOr<MadeRepository> created,
                     RegistryRepository** out) {
  if (!created.ok()) return created.status();
  *out = new RegistryRepository(&descriptor, *std::move(created));
  return absl::OkStatus();
}

int32_t ToCState(ConnectionState state) {
  switch (state) {
    case ConnectionState::kConnected:
      return REGISTRY_CONNECTION_CONNECTED;
    case ConnectionState::kSuspended:
      return REGISTRY_CONNECTION_SUSPENDED;
    case ConnectionState::kLost:
      return REGISTRY_CONNECTION_LOST;
    case ConnectionState::kReconnected:
      return REGISTRY_CONNECTION_RECONNECTED;
  }
  return REGISTRY_CONNECTION_LOST;
}

// ---- Generic table entries. ----

void ReleaseError(RegistryError* error) noexcept {
  if (error == nullptr) return;
  std::free(error->message);
  error->message = nullptr;
  error->code = REGISTRY_OK;
}

void ReleaseValue(char* value) noexcept { std::free(value); }

void ReleaseChildren(char** children, size_t count) noexcept {
  if (children == nullptr) return;
  for (size_t i = 0; i < count; ++i) std::free(children[i]);
  std::free(children);
}

int Get(RegistryRepository* repository, const char* key, char** value, size_t* value_len,
        bool* found, RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(CheckKeyCall(repository, key));
    if (value == nullptr) return NullArgument("value");
    if (value_len == nullptr) return NullArgument("value_len");
    if (found == nullptr) return NullArgument("found");
    *value = nullptr;
    *value_len = 0;
    *found = false;
    ASSIGN_OR_RETURN(std::optional<std::string> got, repository->impl->Get(key));
    if (!got.has_value()) return absl::OkStatus();
    *value = CopyBytes(*got);
    *value_len = got->size();
    *found = true;
    return absl::OkStatus();
  });
}

int GetChildren(RegistryRepository* repository, const char* key, char*** children, size_t* count,
                RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(CheckKeyCall(repository, key));
    if (children == nullptr) return NullArgument("children");
    if (count == nullptr) return NullArgument("count");
    *children = nullptr;
    *count = 0;
    ASSIGN_OR_RETURN(std::vector<std::string> names, repository->impl->GetChildrenKeys(key));
    if (names.empty()) return absl::OkStatus();
    char** array = static_cast<char**>(std::calloc(names.size(), sizeof(char*)));
    if (array == nullptr) throw std::bad_alloc();
    for (size_t i = 0; i < names.size(); ++i) {
      array[i] = static_cast<char*>(std::malloc(names[i].size() + 1));
      if (array[i] == nullptr) {
        ReleaseChildren(array, i);
        throw std::bad_alloc();
      }
      std::memcpy(array[i], names[i].c_str(), names[i].size() + 1);
    }
    *children = array;
    *count = names.size();
    return absl::OkStatus();
  });
}

int Exists(RegistryRepository* repository, const char* key, bool* exists,
           RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(CheckKeyCall(repository, key));
    if (exists == nullptr) return NullArgument("exists");
    *exists = false;
    ASSIGN_OR_RETURN(bool result, repository->impl->IsExisted(key));
    *exists = result;
    return absl::OkStatus();
  });
}

int Persist(RegistryRepository* repository, const char* key, const char* value, size_t value_len,
            RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(CheckKeyCall(repository, key));
    ASSIGN_OR_RETURN(absl::string_view bytes, ValueView(key, value, value_len));
    return repository->impl->Persist(key, bytes);
  });
}

int Update(RegistryRepository* repository, const char* key, const char* value, size_t value_len,
           RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(CheckKeyCall(repository, key));
    ASSIGN_OR_RETURN(absl::string_view bytes, ValueView(key, value, value_len));
    return repository->impl->Update(key, bytes);
  });
}

int DeleteKey(RegistryRepository* repository, const char* key, RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(CheckKeyCall(repository, key));
    return repository->impl->Delete(key);
  });
}

int PersistEphemeral(RegistryRepository* repository, const char* key, const char* value,
                     size_t value_len, RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(CheckKeyCall(repository, key));
    ASSIGN_OR_RETURN(absl::string_view bytes, ValueView(key, value, value_len));
    return repository->impl->PersistEphemeral(key, bytes);
  });
}

int PersistExclusiveEphemeral(RegistryRepository* repository, const char* key, const char* value,
                              size_t value_len, bool* created, RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(CheckKeyCall(repository, key));
    if (created == nullptr) return NullArgument("created");
    *created = false;
    ASSIGN_OR_RETURN(absl::string_view bytes, ValueView(key, value, value_len));
    ASSIGN_OR_RETURN(bool result, repository->impl->PersistExclusiveEphemeral(key, bytes));
    *created = result;
    return absl::OkStatus();
  });
}

int AddConnectionListener(RegistryRepository* repository, RegistryConnectionCallback callback,
                          void* user_data, int64_t* listener_id, RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    if (repository == nullptr || repository->impl == nullptr) return NullArgument("repository");
    if (callback == nullptr) return NullArgument("callback");
    if (listener_id == nullptr) return NullArgument("listener_id");
    *listener_id = repository->impl->AddConnectionListener(
        [callback, user_data](ConnectionState state) { callback(ToCState(state), user_data); });
    return absl::OkStatus();
  });
}

int RemoveConnectionListener(RegistryRepository* repository, int64_t listener_id,
                             RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    if (repository == nullptr || repository->impl == nullptr) return NullArgument("repository");
    // Ids come from AddConnectionListener (an int); anything else was never handed out.
    if (listener_id < INT32_MIN || listener_id > INT32_MAX) return absl::OkStatus();
    repository->impl->RemoveConnectionListener(static_cast<int>(listener_id));
    return absl::OkStatus();
  });
}

int Close(RegistryRepository* repository, RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    if (repository == nullptr || repository->impl == nullptr) return NullArgument("repository");
    return repository->impl->Close();
  });
}

void Destroy(RegistryRepository* repository) noexcept {
  if (repository == nullptr) return;
  // Close() is documented as safe to call twice; its status has nowhere to go here. Closing
  // first stops every data listener and fails lock waiters.
  Guarded(nullptr, [&]() -> absl::Status {
    if (repository->impl != nullptr) (void)repository->impl->Close();
    return absl::OkStatus();
  });
  // The locks use the repository's session: they go first.
  Guarded(nullptr, [&]() -> absl::Status {
    std::unique_ptr<lock::LockProvider> locks;
    {
      absl::MutexLock lock(&repository->locks_mu);
      locks = std::move(repository->locks);
    }
    locks.reset();
    return absl::OkStatus();
  });
  Guarded(nullptr, [&]() -> absl::Status {
    delete repository;
    return absl::OkStatus();
  });
}

// The prefix of the table up to and including `member` fits in `size` bytes.
#define REGISTRY_FITS(size, member) \
  (offsetof(RegistryPluginApi, member) + sizeof(RegistryPluginApi::member) <= (size))

}  // namespace

int ReportStatus(const absl::Status& status, RegistryError* error) noexcept {
  const int code = static_cast<int>(status.code());
  if (status.ok()) return REGISTRY_OK;
  // absl::Status::message() is a view; copy with room for the terminating NUL.
  const absl::string_view message = status.message();
  if (error != nullptr && error->message == nullptr) {
    char* copy = static_cast<char*>(std::malloc(message.size() + 1));
    if (copy != nullptr) {
      std::memcpy(copy, message.data(), message.size());
      copy[message.size()] = '\0';
    }
    error->code = code;
    error->message = copy;
  }
  return code;
}

namespace internal {

int CreateFromYaml(const PluginDescriptor& descriptor, const char* yaml, size_t yaml_len,
                   const char* const* override_keys, const char* const* override_values,
                   size_t override_count, RegistryRepository** out, RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    if (out == nullptr) return NullArgument("out");
    *out = nullptr;
    if (yaml == nullptr) return NullArgument("yaml");
    ASSIGN_OR_RETURN(PropList overrides,
                     CopyProps(override_keys, override_values, override_count, "override"));
    return Publish(descriptor, descriptor.from_yaml(absl::string_view(yaml, yaml_len), overrides),
                   out);
  });
}

int CreateFromYamlFile(const PluginDescriptor& descriptor, const char* path,
                       const char* const* override_keys, const char* const* override_values,
                       size_t override_count, RegistryRepository** out,
                       RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    if (out == nullptr) return NullArgument("out");
    *out = nullptr;
    if (path == nullptr) return NullArgument("path");
    ASSIGN_OR_RETURN(PropList overrides,
                     CopyProps(override_keys, override_values, override_count, "override"));
    return Publish(descriptor, descriptor.from_yaml_file(path, overrides), out);
  });
}

int CreateFromProps(const PluginDescriptor& descriptor, const char* const* keys,
                    const char* const* values, size_t count, RegistryRepository** out,
                    RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    if (out == nullptr) return NullArgument("out");
    *out = nullptr;
    ASSIGN_OR_RETURN(PropList props, CopyProps(keys, values, count, "prop"));
    return Publish(descriptor, descriptor.from_props(props), out);
  });
}

int FillApi(const PluginDescriptor& descriptor, uint32_t host_abi_version, RegistryPluginApi* api,
            RegistryError* error, CreateFromYamlFn from_yaml, CreateFromYamlFileFn from_yaml_file,
            CreateFromPropsFn from_props) noexcept {
  // Without a table holding release_error the host could not free a message: code only.
  if (api == nullptr || !REGISTRY_FITS(api->struct_size, release_error)) {
    return REGISTRY_INVALID_ARGUMENT;
  }
  // The header is the same in every major version, so the host can always release `error`.
  api->release_error = &ReleaseError;
  const uint32_t host_major = REGISTRY_PLUGIN_ABI_MAJOR(host_abi_version);
  if (host_major != REGISTRY_PLUGIN_ABI_VERSION_MAJOR) {
    return Guarded(error, [&]() -> absl::Status {
      return absl::UnimplementedError(absl::StrCat(
          "registry plugin '", descriptor.repository_type, "' speaks ABI ",
          REGISTRY_PLUGIN_ABI_VERSION_MAJOR, ".", REGISTRY_PLUGIN_ABI_VERSION_MINOR,
          "; the host asked for ", host_major, ".", REGISTRY_PLUGIN_ABI_MINOR(host_abi_version)));
    });
  }
  const uint32_t minor = std::min<uint32_t>(REGISTRY_PLUGIN_ABI_MINOR(host_abi_version),
                                            REGISTRY_PLUGIN_ABI_VERSION_MINOR);
  const uint32_t host_size = api->struct_size;
  size_t filled = offsetof(RegistryPluginApi, release_error) + sizeof(api->release_error);

  // Each minor's entries follow the previous minor's; they are filled only when the negotiated
  // `minor` includes them and they fit in the host's table, so a 1.0 host's table (which ends at
  // `destroy`) is never written past its end.
#define REGISTRY_FILL(entry_minor, member, value)                              \
  if (MinorIncludes(minor, entry_minor) && REGISTRY_FITS(host_size, member)) { \
    api->member = (value);                                                     \
    filled = offsetof(RegistryPluginApi, member) + sizeof(api->member);        \
  }
  REGISTRY_PLUGIN_API_ENTRIES(REGISTRY_FILL)
#undef REGISTRY_FILL
  api->struct_size = static_cast<uint32_t>(filled);
  api->abi_version = REGISTRY_PLUGIN_ABI_VERSION(REGISTRY_PLUGIN_ABI_VERSION_MAJOR, minor);
  return REGISTRY_OK;
}

}  // namespace internal
}  // namespace registry::plugin

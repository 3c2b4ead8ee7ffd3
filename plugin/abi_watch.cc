// SPDX-License-Identifier: Apache-2.0
// plugin/abi_watch.cc
//
// The 1.1 entries of the C table: watches with C callbacks (add_data_listener,
// remove_data_listener). A C watch id is the repository's WatchId, and removal is
// Repository::RemoveWatch, whose guarantees are the ABI's: nothing to keep on this side.
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "base/status_text.h"
#include "plugin/abi_internal.h"

namespace registry::plugin::internal {
namespace {

int32_t ToCType(DataChangedEvent::Type type) {
  switch (type) {
    case DataChangedEvent::Type::kAdded:
      return REGISTRY_DATA_ADDED;
    case DataChangedEvent::Type::kUpdated:
      return REGISTRY_DATA_UPDATED;
    case DataChangedEvent::Type::kDeleted:
      return REGISTRY_DATA_DELETED;
  }
  return REGISTRY_DATA_UPDATED;
}

constexpr uint32_t kKnownWatchOptions = REGISTRY_WATCH_REPLAY_EXISTING;

// Calls the host's `callback` with `event` as a C event. Never throws.
void DeliverToHost(RegistryDataCallback callback, void* user_data,
                   const DataChangedEvent& event) noexcept {
  RegistryDataEvent c_event{};
  c_event.struct_size = sizeof(c_event);
  c_event.type = ToCType(event.type);
  c_event.key = event.key.c_str();
  if (event.value.has_value()) {
    // std::string keeps a NUL after its bytes, as the ABI promises.
    c_event.value = event.value->c_str();
    c_event.value_len = event.value->size();
    c_event.value_known = true;
  }
  c_event.flags = event.flags;
  callback(&c_event, user_data);
}

}  // namespace

int AddDataListener(RegistryRepository* repository, const char* key, uint32_t options,
                    RegistryDataCallback callback, void* user_data, int64_t* watch_id,
                    RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    if (repository == nullptr || repository->impl == nullptr) return NullArgument("repository");
    if (key == nullptr) return NullArgument("key");
    if (callback == nullptr) return NullArgument("callback");
    if (watch_id == nullptr) return NullArgument("watch_id");
    *watch_id = 0;
    if ((options & ~kKnownWatchOptions) != 0) {
      return absl::InvalidArgumentError(absl::StrCat("registry plugin: watch '", key,
                                                     "': unknown option bits 0x",
                                                     absl::Hex(options & ~kKnownWatchOptions)));
    }
    DataListenerOptions listener_options;
    listener_options.replay_existing = (options & REGISTRY_WATCH_REPLAY_EXISTING) != 0;
    absl::StatusOr<Repository::WatchId> id = repository->impl->Watch(
        key,
        [callback, user_data](const DataChangedEvent& event) {
          DeliverToHost(callback, user_data, event);
        },
        listener_options);
    if (!id.ok()) return id.status();
    if (*id > static_cast<Repository::WatchId>(INT64_MAX)) {
      repository->impl->RemoveWatch(*id);
      return absl::ResourceExhaustedError(
          absl::StrCat("registry plugin: watch '", Abbreviated(key), "': watch ids exhausted"));
    }
    *watch_id = static_cast<int64_t>(*id);
    return absl::OkStatus();
  });
}

int RemoveDataListener(RegistryRepository* repository, int64_t watch_id,
                       RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    if (repository == nullptr || repository->impl == nullptr) return NullArgument("repository");
    if (watch_id > 0) repository->impl->RemoveWatch(static_cast<Repository::WatchId>(watch_id));
    return absl::OkStatus();
  });
}

}  // namespace registry::plugin::internal

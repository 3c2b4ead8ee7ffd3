// plugin/abi_watch.cc
//
// The 1.1 entries of the C table: watches with C callbacks (add_data_listener,
// remove_data_listener), over Repository::Watch / RemoveDataListener.
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
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

}  // namespace

void WatchSlot::Deliver(const DataChangedEvent& event) noexcept {
  absl::MutexLock lock(&call_mu);
  if (!active.load()) return;
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
  caller.store(std::this_thread::get_id());
  callback(&c_event, user_data);
  caller.store(std::thread::id());
}

absl::StatusOr<int64_t> WatchTable::Add(Repository& repository, const char* key, uint32_t options,
                                        RegistryDataCallback callback, void* user_data) {
  if ((options & ~kKnownWatchOptions) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("registry plugin: watch '", key,
                                                   "': unknown option bits 0x",
                                                   absl::Hex(options & ~kKnownWatchOptions)));
  }
  auto slot = std::make_shared<WatchSlot>();
  slot->callback = callback;
  slot->user_data = user_data;
  slot->key = key;
  {
    absl::MutexLock lock(&mu_);
    // Counted before waiting, so a release in progress keeps the entry for us.
    KeyState& state = keys_[slot->key];
    ++state.adding;
    mu_.Await(absl::Condition(
        +[](KeyState* s) { return !s->releasing; }, &state));
  }
  DataListenerOptions listener_options;
  listener_options.replay_existing = (options & REGISTRY_WATCH_REPLAY_EXISTING) != 0;
  // No lock held: the repository reads the subtree, and the listener may call back into us.
  absl::Status status = repository.Watch(
      slot->key, [slot](const DataChangedEvent& event) { slot->Deliver(event); }, listener_options);
  absl::MutexLock lock(&mu_);
  KeyState& state = keys_[slot->key];
  --state.adding;
  if (!status.ok()) {
    ReleaseIfUnused(repository, slot->key);
    return status;
  }
  ++state.live;
  state.registered = true;
  const int64_t id = next_id_++;
  watches_.emplace(id, std::move(slot));
  return id;
}

void WatchTable::Remove(Repository& repository, int64_t id) {
  std::shared_ptr<WatchSlot> slot;
  {
    absl::MutexLock lock(&mu_);
    auto it = watches_.find(id);
    if (it == watches_.end()) return;
    slot = it->second;  // stays listed until the wait below, so a concurrent Remove waits too
  }
  slot->active.store(false);
  // Wait for a call in progress, unless it is this thread's own (removal from inside the
  // callback): that call finishes after we return, and no other starts.
  if (slot->caller.load() != std::this_thread::get_id()) {
    absl::MutexLock wait(&slot->call_mu);
  }
  absl::MutexLock lock(&mu_);
  if (watches_.erase(id) == 0) return;  // a concurrent Remove did the bookkeeping
  --keys_[slot->key].live;
  ReleaseIfUnused(repository, slot->key);
}

void WatchTable::ReleaseIfUnused(Repository& repository, const std::string& key) {
  auto it = keys_.find(key);
  if (it == keys_.end()) return;
  KeyState& state = it->second;
  if (state.live > 0 || state.adding > 0 || state.releasing) return;
  if (state.registered) {
    // Every registration of the key belongs to a removed watch. Add() waits while `releasing`
    // (it counts itself in `adding` first), so nothing new is registered and the entry stays.
    state.releasing = true;
    mu_.Unlock();
    repository.RemoveDataListener(key);
    mu_.Lock();
    state.releasing = false;
    state.registered = false;
  }
  if (state.adding == 0 && state.live == 0) keys_.erase(key);
}

int AddDataListener(RegistryRepository* repository, const char* key, uint32_t options,
                    RegistryDataCallback callback, void* user_data, int64_t* watch_id,
                    RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    if (repository == nullptr || repository->impl == nullptr) return NullArgument("repository");
    if (key == nullptr) return NullArgument("key");
    if (callback == nullptr) return NullArgument("callback");
    if (watch_id == nullptr) return NullArgument("watch_id");
    *watch_id = 0;
    absl::StatusOr<int64_t> id =
        repository->watches.Add(*repository->impl, key, options, callback, user_data);
    if (!id.ok()) return id.status();
    *watch_id = *id;
    return absl::OkStatus();
  });
}

int RemoveDataListener(RegistryRepository* repository, int64_t watch_id,
                       RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    if (repository == nullptr || repository->impl == nullptr) return NullArgument("repository");
    repository->watches.Remove(*repository->impl, watch_id);
    return absl::OkStatus();
  });
}

}  // namespace registry::plugin::internal

// SPDX-License-Identifier: Apache-2.0
// host/plugin_handles.cc
#include "host/plugin_handles.h"

#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace registry::plugin {

absl::StatusCode StatusCodeFromC(int code) {
  return (code > 0 && code <= REGISTRY_UNAUTHENTICATED) ? static_cast<absl::StatusCode>(code)
                                                        : absl::StatusCode::kUnknown;
}

absl::Status TakeStatus(const RegistryPluginApi& api, int code, RegistryError* error) {
  if (code == REGISTRY_OK) {
    if (api.release_error != nullptr) api.release_error(error);
    return absl::OkStatus();
  }
  std::string message = error->message != nullptr
                            ? std::string(error->message)
                            : absl::StrCat("registry plugin call failed with code ", code);
  if (api.release_error != nullptr) api.release_error(error);
  return absl::Status(StatusCodeFromC(code), message);
}

void PluginWatch::Remove() {
  if (slot_ == nullptr) return;
  if (RegistryRepository* handle = link_->handle.load(); handle != nullptr) {
    RegistryError error{};
    // Its only failure is a NULL argument, which cannot happen here.
    (void)TakeStatus(*link_->api, link_->api->remove_data_listener(handle, id_, &error), &error);
  }
  Slot::Retire(std::exchange(slot_, nullptr));
  link_.reset();
}

PluginLock::~PluginLock() {
  api_.release_lock(handle_);
  absl::MutexLock lock(&mu_);
  for (auto& [id, slot] : listeners_) LostSlot::Retire(slot);
}

absl::Status PluginLock::Lock() {
  RegistryError error{};
  return TakeStatus(api_, api_.lock(handle_, &error), &error);
}

absl::StatusOr<bool> PluginLock::TryLock(absl::Duration timeout) {
  int64_t ms = 0;
  if (timeout == absl::InfiniteDuration()) {
    ms = std::numeric_limits<int64_t>::max();
  } else if (timeout > absl::ZeroDuration()) {
    ms = absl::ToInt64Milliseconds(timeout);
    if (absl::Milliseconds(ms) < timeout) ++ms;
  }
  bool acquired = false;
  RegistryError error{};
  RETURN_IF_ERROR(TakeStatus(api_, api_.try_lock(handle_, ms, &acquired, &error), &error));
  return acquired;
}

absl::Status PluginLock::Unlock() {
  RegistryError error{};
  return TakeStatus(api_, api_.unlock(handle_, &error), &error);
}

absl::StatusOr<bool> PluginLock::IsHeldByCurrentThread() {
  bool held = false;
  RegistryError error{};
  RETURN_IF_ERROR(TakeStatus(api_, api_.lock_is_held(handle_, &held, &error), &error));
  return held;
}

absl::StatusOr<bool> PluginLock::IsLost() {
  bool lost = false;
  RegistryError error{};
  RETURN_IF_ERROR(TakeStatus(api_, api_.lock_is_lost(handle_, &lost, &error), &error));
  return lost;
}

absl::StatusOr<int64_t> PluginLock::AddLostListener(LostListener listener) {
  auto slot = std::make_unique<LostSlot>(std::move(listener));
  int64_t id = 0;
  RegistryError error{};
  RETURN_IF_ERROR(TakeStatus(
      api_, api_.add_lock_lost_listener(handle_, &LostTrampoline, slot.get(), &id, &error),
      &error));
  absl::MutexLock lock(&mu_);
  listeners_[id] = slot.release();
  return id;
}

void PluginLock::RemoveLostListener(int64_t id) {
  RegistryError error{};
  (void)TakeStatus(api_, api_.remove_lock_lost_listener(handle_, id, &error), &error);
  internal::RetireSlot(mu_, listeners_, id);
}

absl::Status PluginLock::PersistIfHeld(absl::string_view key, absl::string_view value) {
  const std::string k(key);
  RegistryError error{};
  return TakeStatus(
      api_, api_.persist_if_held(handle_, k.c_str(), value.data(), value.size(), &error), &error);
}

absl::Status PluginLock::DeleteIfHeld(absl::string_view key) {
  const std::string k(key);
  RegistryError error{};
  return TakeStatus(api_, api_.delete_if_held(handle_, k.c_str(), &error), &error);
}

void PluginLock::LostTrampoline(const char* name, int32_t code, const char* message,
                                void* user_data) noexcept {
  LostSlot::Run(user_data, [&](const LostListener& listener) {
    listener(name, absl::Status(StatusCodeFromC(code), message));
  });
}

}  // namespace registry::plugin

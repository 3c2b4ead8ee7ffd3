// SPDX-License-Identifier: Apache-2.0
// plugin/abi_lock.cc
//
// The 1.2 to 1.5 entries of the C table: named locks (get_lock ... delete_if_held), fair locks
// (get_fair_lock), semaphores (get_semaphore) and read/write locks (get_read_write_lock) over
// the plugin's lock::LockProvider and its locks (lock/distributed_lock.h).
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "plugin/abi_internal.h"

namespace registry::plugin::internal {
namespace {

absl::Status CheckLock(const RegistryLock* lock) {
  if (lock == nullptr || lock->impl == nullptr) return NullArgument("lock");
  return absl::OkStatus();
}

// The repository's locks (its LockProvider), made on first use.
absl::StatusOr<lock::LockProvider*> LocksOf(RegistryRepository& repository, const char* name) {
  absl::MutexLock lock(&repository.locks_mu);
  if (repository.locks == nullptr) {
    if (repository.new_lock_provider == nullptr) {
      return absl::UnimplementedError(absl::StrCat("registry plugin '",
                                                   repository.descriptor->repository_type,
                                                   "' has no locks (lock '", name, "')"));
    }
    ASSIGN_OR_RETURN(std::unique_ptr<lock::LockProvider> created, repository.new_lock_provider());
    repository.locks = std::move(created);
  }
  return repository.locks.get();
}

// get_lock, get_fair_lock, get_semaphore and get_read_write_lock: a handle for what `get`
// (called with the repository's service) finds.
template <typename Get>
int GetLockHandle(RegistryRepository* repository, const char* name, RegistryLock** out,
                  RegistryError* error, Get get) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    if (out == nullptr) return NullArgument("out");
    *out = nullptr;
    if (repository == nullptr || repository->impl == nullptr) return NullArgument("repository");
    if (name == nullptr) return NullArgument("name");
    ASSIGN_OR_RETURN(lock::LockProvider * locks, LocksOf(*repository, name));
    ASSIGN_OR_RETURN(std::shared_ptr<lock::DistributedLock> found, get(*locks));
    *out = new RegistryLock(std::move(found));
    return absl::OkStatus();
  });
}

}  // namespace

int GetLock(RegistryRepository* repository, const char* name, RegistryLock** out,
            RegistryError* error) noexcept {
  return GetLockHandle(repository, name, out, error,
                       [name](lock::LockProvider& locks) { return locks.GetLock(name); });
}

int GetFairLock(RegistryRepository* repository, const char* name, RegistryLock** out,
                RegistryError* error) noexcept {
  return GetLockHandle(repository, name, out, error,
                       [name](lock::LockProvider& locks) { return locks.GetFairLock(name); });
}

int GetSemaphore(RegistryRepository* repository, const char* name, int32_t limit,
                 RegistryLock** out, RegistryError* error) noexcept {
  return GetLockHandle(repository, name, out, error, [name, limit](lock::LockProvider& locks) {
    return locks.GetSemaphore(name, static_cast<int>(limit));
  });
}

int GetReadWriteLock(RegistryRepository* repository, const char* name, int32_t write,
                     RegistryLock** out, RegistryError* error) noexcept {
  return GetLockHandle(
      repository, name, out, error,
      [name,
       write](lock::LockProvider& locks) -> absl::StatusOr<std::shared_ptr<lock::DistributedLock>> {
        // Checked here, not by the service, so that every plugin names a bad side alike.
        if (write != 0 && write != 1) {
          return absl::InvalidArgumentError(absl::StrCat(
              "registry plugin: get_read_write_lock: write must be 0 (the read side) or 1 (the "
              "write side), got ",
              write, " (read/write lock '", name, "')"));
        }
        return write == 1 ? locks.GetWriteLock(name) : locks.GetReadLock(name);
      });
}

void ReleaseLock(RegistryLock* lock) noexcept {
  if (lock == nullptr) return;
  Guarded(nullptr, [&]() -> absl::Status {
    std::set<int> listeners;
    {
      absl::MutexLock hold(&lock->mu);
      listeners.swap(lock->listeners);
    }
    for (int id : listeners) lock->impl->RemoveLostListener(id);
    return absl::OkStatus();
  });
  Guarded(nullptr, [&]() -> absl::Status {
    delete lock;
    return absl::OkStatus();
  });
}

int Lock(RegistryLock* lock, RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(CheckLock(lock));
    return lock->impl->Lock();
  });
}

int TryLock(RegistryLock* lock, int64_t timeout_ms, bool* acquired, RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(CheckLock(lock));
    if (acquired == nullptr) return NullArgument("acquired");
    *acquired = false;
    ASSIGN_OR_RETURN(bool got, lock->impl->TryLock(absl::Milliseconds(timeout_ms)));
    *acquired = got;
    return absl::OkStatus();
  });
}

int Unlock(RegistryLock* lock, RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(CheckLock(lock));
    return lock->impl->Unlock();
  });
}

int LockIsHeld(RegistryLock* lock, bool* held, RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(CheckLock(lock));
    if (held == nullptr) return NullArgument("held");
    *held = lock->impl->IsHeldByCurrentThread();
    return absl::OkStatus();
  });
}

int LockIsLost(RegistryLock* lock, bool* lost, RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(CheckLock(lock));
    if (lost == nullptr) return NullArgument("lost");
    *lost = lock->impl->lost();
    return absl::OkStatus();
  });
}

int AddLockLostListener(RegistryLock* lock, RegistryLockLostCallback callback, void* user_data,
                        int64_t* listener_id, RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(CheckLock(lock));
    if (callback == nullptr) return NullArgument("callback");
    if (listener_id == nullptr) return NullArgument("listener_id");
    const int id = lock->impl->AddLostListener(
        [callback, user_data](const std::string& name, const absl::Status& reason) {
          const std::string message(reason.message());
          callback(name.c_str(), static_cast<int32_t>(reason.code()), message.c_str(), user_data);
        });
    absl::MutexLock hold(&lock->mu);
    lock->listeners.insert(id);
    *listener_id = id;
    return absl::OkStatus();
  });
}

int RemoveLockLostListener(RegistryLock* lock, int64_t listener_id, RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(CheckLock(lock));
    // Only ids this handle handed out: the lock's ids are shared by every handle.
    if (listener_id < INT32_MIN || listener_id > INT32_MAX) return absl::OkStatus();
    const int id = static_cast<int>(listener_id);
    {
      absl::MutexLock hold(&lock->mu);
      if (lock->listeners.count(id) == 0) return absl::OkStatus();
    }
    // Not under lock->mu: this waits for a running call, which may use the handle. The id stays
    // listed until then, so a concurrent removal of the same id waits in the lock too.
    lock->impl->RemoveLostListener(id);
    absl::MutexLock hold(&lock->mu);
    lock->listeners.erase(id);
    return absl::OkStatus();
  });
}

int PersistIfHeld(RegistryLock* lock, const char* key, const char* value, size_t value_len,
                  RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(CheckLock(lock));
    if (key == nullptr) return NullArgument("key");
    ASSIGN_OR_RETURN(absl::string_view bytes, ValueView(key, value, value_len));
    return registry::lock::PersistIfHeld(*lock->impl, key, bytes);
  });
}

int DeleteIfHeld(RegistryLock* lock, const char* key, RegistryError* error) noexcept {
  return Guarded(error, [&]() -> absl::Status {
    RETURN_IF_ERROR(CheckLock(lock));
    if (key == nullptr) return NullArgument("key");
    return registry::lock::DeleteIfHeld(*lock->impl, key);
  });
}

}  // namespace registry::plugin::internal

// SPDX-License-Identifier: Apache-2.0
// tests/plugin/memory_locks.h
//
// The locks of the in-memory test plugin (memory_plugin.cc): a test double of
// lock::DistributedLock (lock/distributed_lock.h), process-local and re-entrant per thread, so the
// lock entries of the C ABI and the C++ wrapper can be tested without a server. Test hook:
// LoseLock(name) makes the current hold of `name` lost, as a session expiry would.
//
// Thread safety: every method may be called concurrently.
#ifndef REGISTRY_TESTS_PLUGIN_MEMORY_LOCKS_H_
#define REGISTRY_TESTS_PLUGIN_MEMORY_LOCKS_H_

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "lock/lock_provider.h"
#include "plugin/abi_adapter.h"
#include "registry/repository.h"

namespace registry::plugin {

class MemoryLock;

class MemoryLockProvider final : public lock::LockProvider {
 public:
  // `repository` serves the fenced writes and must outlive the service; `on_destroy` runs at
  // the start of the destructor.
  MemoryLockProvider(Repository& repository, std::function<void()> on_destroy);
  ~MemoryLockProvider() override;

  absl::StatusOr<std::shared_ptr<lock::DistributedLock>> GetLock(absl::string_view name) override;

  // Marks the current hold of `name` lost and calls its listeners from a background thread.
  void LoseLock(const std::string& name);
  // Fails waiters and later calls with FailedPrecondition; held locks are reported lost.
  void Close();

 private:
  Repository& repository_;
  const std::function<void()> on_destroy_;
  absl::Mutex mu_;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, std::shared_ptr<MemoryLock>> locks_ ABSL_GUARDED_BY(mu_);
};

}  // namespace registry::plugin

#endif  // REGISTRY_TESTS_PLUGIN_MEMORY_LOCKS_H_

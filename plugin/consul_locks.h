// plugin/consul_locks.h
//
// The locks of the Consul plugin: the C ABI's lock entries (abi_adapter.h LockService) served by
// registry::lock's two-tier locks (lock/lock_manager.h), one LockManager per repository handle.
// Internal to the Consul plugin library.
//
// Thread safety: as LockService states.
#ifndef REGISTRY_PLUGIN_CONSUL_LOCKS_H_
#define REGISTRY_PLUGIN_CONSUL_LOCKS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "plugin/abi_adapter.h"
#include "repository/consul_repository.h"

namespace registry::plugin {

// The lock service of `repository`, which must outlive the service. Errors: FailedPrecondition
// if `repository` already has a lock manager.
absl::StatusOr<std::unique_ptr<LockService>> NewConsulLockService(ConsulRepository& repository);

}  // namespace registry::plugin

#endif  // REGISTRY_PLUGIN_CONSUL_LOCKS_H_

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
#include "registry/repository.h"

namespace registry::plugin {

// The lock service of `repository`, which must come from NewConsulRepository and outlive the
// service. Errors: FailedPrecondition if `repository` is not Consul-backed or already has a
// lock manager.
absl::StatusOr<std::unique_ptr<LockService>> NewConsulLockService(Repository& repository);

}  // namespace registry::plugin

#endif  // REGISTRY_PLUGIN_CONSUL_LOCKS_H_

// SPDX-License-Identifier: Apache-2.0
// instance/instance.h
//
// The composition root of one registry instance over Consul. NewConsulInstance builds, in
// dependency order, the parts every feature of an instance shares — the key space, the client,
// the canceller that closing cancels, the serial executor (whose worker also runs the watch
// listeners), the session keeper and the watch engine — wires them together (reachability
// reports reach the keeper; the keeper's events go through the executor), and hands each of the
// repository and the lock manager only what it uses. Nothing else builds these parts, and the
// repository and the lock manager never see each other.
//
// Ownership: the middleware holds only the repository, so the repository keeps the parts alive
// (RepositoryParts::owner) and its Close() closes them in order: the keeper, the engine, the
// executor. ConsulInstance::locks refers to those parts: valid while `repository` lives.
//
// Thread safety: the functions may be called from any thread; see each part's header for its own.
#ifndef INSTANCE_INSTANCE_H_
#define INSTANCE_INSTANCE_H_

#include <memory>

#include "absl/status/statusor.h"
#include "lock/lock_manager.h"
#include "repository/consul_repository.h"

namespace registry {

struct ConsulInstance {
  std::unique_ptr<ConsulRepository> repository;
  // What LockManager::Create takes: at most one manager per instance at a time.
  lock::LockManagerParts locks;
};

// Validates `options` and builds an instance that has not contacted any server yet (the first
// call does; no session exists until the first ephemeral write or lock) and runs no thread.
// Errors: InvalidArgument for bad options (naming the field), or what the client reports for
// its own options; ResourceExhausted when the watch engine cannot allocate its descriptors.
absl::StatusOr<ConsulInstance> NewConsulInstance(ConsulRepositoryOptions options);

// The repository of a new instance, for code that uses no lock. Errors as NewConsulInstance.
absl::StatusOr<std::unique_ptr<ConsulRepository>> NewConsulRepository(
    ConsulRepositoryOptions options);

// Makes the metric families of every layer an instance uses (base/metric_catalog.h), so that a
// scrape lists each of them, at zero, before its first use. NewConsulInstance calls it; so does
// the plugin when it is loaded. Idempotent.
void MakeInstanceMetrics();

}  // namespace registry

#endif  // INSTANCE_INSTANCE_H_

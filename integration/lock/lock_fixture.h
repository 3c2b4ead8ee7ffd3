// SPDX-License-Identifier: Apache-2.0
// integration/lock/lock_fixture.h
//
// Fixture of the lock integration tests: a fresh server per test (the dev server or real Consul,
// see integration/testing/server_test.h), repositories with a 1 s TTL and a short lock-delay
// against it, their lock managers, a raw client to inspect or tamper with lock keys, and a recorder
// of lost notifications that tests wait on with deadlines.
#ifndef INTEGRATION_LOCK_LOCK_FIXTURE_H_
#define INTEGRATION_LOCK_LOCK_FIXTURE_H_

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "consul/client.h"
#include "devserver/dev_server.h"
#include "gtest/gtest.h"
#include "instance/instance.h"
#include "integration/testing/server_test.h"
#include "lock/distributed_lock.h"
#include "lock/lock_manager.h"
#include "registry/repository.h"

namespace registry::lock::testing {

// Long enough for a loaded machine, short enough to fail fast.
using registry::testing::Eventually;
using registry::testing::kPatience;
// Lock-delay of every test repository's session.
inline constexpr absl::Duration kLockDelay = absl::Milliseconds(600);

class LockTest : public registry::testing::ServerTest {
 protected:
  // TTL 1 s, lock-delay kLockDelay, lock retry 50 ms, blocking wait 5 s, namespace "locks".
  ConsulRepositoryOptions RepositoryOptions();
  // A repository of a new instance (with RepositoryOptions() by default); NewManager builds the
  // instance's lock manager.
  std::unique_ptr<ConsulRepository> NewRepository();
  std::unique_ptr<ConsulRepository> NewRepository(const ConsulRepositoryOptions& options);
  // The lock manager of the instance of `repository`, made by NewRepository() (which must
  // still live).
  std::unique_ptr<LockManager> NewManager(ConsulRepository& repository,
                                          LockManagerOptions options = {});
  // manager.GetLock(name), failing the test on error.
  std::shared_ptr<DistributedLock> GetLock(LockManager& manager, const std::string& name);

  // The session holding the lock key of `lock`, "" if unlocked or absent.
  std::string HolderOf(const DistributedLock& lock);
  // The request counters of `endpoint` ("kv.put", "kv.get", "txn", "session.create", ...).
  uint64_t Requests(const std::string& endpoint);
  // The slowest of 20 plain reads against the dev server, in this build and run: the unit of a
  // timing bound, so that a sanitizer build on a loaded machine gets a proportionally wider one.
  absl::Duration SlowestRoundTrip();

 private:
  // What NewManager needs of each instance NewRepository made, by its repository.
  std::map<const ConsulRepository*, LockManagerParts> instances_;
};

// Lock tests that need the dev server's fault injection or request counts.
class LockFaultsTest : public registry::testing::DevServerOnly<LockTest> {};

// Records lost notifications; Await waits for the n-th with a deadline.
class LossRecorder {
 public:
  DistributedLock::LostListener Listener();
  bool AwaitCount(size_t count, absl::Duration timeout = kPatience);
  std::vector<std::string> reasons();

 private:
  absl::Mutex mu_;
  std::vector<std::string> reasons_ ABSL_GUARDED_BY(mu_);
};

}  // namespace registry::lock::testing

#endif  // INTEGRATION_LOCK_LOCK_FIXTURE_H_

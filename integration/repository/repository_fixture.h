// SPDX-License-Identifier: Apache-2.0
// integration/repository/repository_fixture.h
//
// Fixture of the repository integration tests: a fresh server per test (the dev server or real
// Consul, see integration/testing/server_test.h), repositories with a 1 s TTL against it, a raw
// client to inspect what the server holds, and a recorder of connection states that tests wait on
// with deadlines.
#ifndef INTEGRATION_REPOSITORY_REPOSITORY_FIXTURE_H_
#define INTEGRATION_REPOSITORY_REPOSITORY_FIXTURE_H_

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
#include "integration/testing/state_recorder.h"
#include "registry/repository.h"

namespace registry::testing {

// Long enough for a loaded machine, short enough to fail fast.
class RepositoryTest : public ServerTest {
 protected:
  // Options for a repository of namespace `name`: TTL 1 s, lock-delay 300 ms, retry 50 ms.
  ConsulRepositoryOptions Options(const std::string& name = "ns");
  std::unique_ptr<ConsulRepository> NewRepository(const std::string& name = "ns");
  std::unique_ptr<ConsulRepository> NewRepository(const ConsulRepositoryOptions& options);

  // The session holding Consul key `consul_key`, "" if none; fails the test if absent.
  std::string HolderOf(const std::string& consul_key);
  // The live instance session of `repository` ("" when none).
  static std::string SessionOf(ConsulRepository& repository);
  // Ids of every session the server knows.
  std::vector<std::string> SessionIds();
};

}  // namespace registry::testing

#endif  // INTEGRATION_REPOSITORY_REPOSITORY_FIXTURE_H_

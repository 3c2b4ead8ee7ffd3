// SPDX-License-Identifier: Apache-2.0
// integration/repository/repository_fixture.cc
#include "integration/repository/repository_fixture.h"

#include <algorithm>
#include <utility>

#include "repository/instance_session.h"

namespace registry::testing {

ConsulRepositoryOptions RepositoryTest::Options(const std::string& name) {
  ConsulRepositoryOptions options;
  options.client = ClientOptionsForCodeUnderTest();
  options.client.request_timeout = absl::Seconds(5);
  options.namespace_name = name;
  options.session_ttl = absl::Seconds(1);
  options.session_lock_delay = absl::Milliseconds(300);
  options.lock_retry = absl::Milliseconds(50);
  options.block_query_wait = absl::Seconds(1);
  return options;
}

std::string RepositoryTest::SessionOf(ConsulRepository& repository) {
  return repository.CurrentSessionId();
}

std::unique_ptr<ConsulRepository> RepositoryTest::NewRepository(const std::string& name) {
  return NewRepository(Options(name));
}

std::unique_ptr<ConsulRepository> RepositoryTest::NewRepository(
    const ConsulRepositoryOptions& options) {
  absl::StatusOr<std::unique_ptr<ConsulRepository>> repository = NewConsulRepository(options);
  EXPECT_TRUE(repository.ok()) << repository.status();
  return repository.ok() ? *std::move(repository) : nullptr;
}

std::string RepositoryTest::HolderOf(const std::string& consul_key) {
  std::optional<std::string> session = KeySession(consul_key);
  EXPECT_TRUE(session.has_value()) << consul_key << " is absent";
  return session.value_or("");
}

std::vector<std::string> RepositoryTest::SessionIds() {
  absl::StatusOr<consul::SessionListResult> result = raw().ListSessions();
  EXPECT_TRUE(result.ok()) << result.status();
  std::vector<std::string> ids;
  if (!result.ok()) return ids;
  for (const consul::SessionInfo& session : result->sessions) ids.push_back(session.id);
  return ids;
}

}  // namespace registry::testing

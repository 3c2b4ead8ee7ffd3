// SPDX-License-Identifier: Apache-2.0
// integration/repository/connection_health_test.cc
//
// Connection states come from every call and watch, not only from the instance session: an
// instance that only reads and watches hears Consul go and come back, and a live session is
// suspended by the first call that cannot reach Consul, not by the next renewal.
// Dev server only: the outages are the server's fault injection (every request answers 500 "No
// cluster leader").
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/repository/repository_fixture.h"
#include "repository/instance_session.h"

namespace registry::testing {
namespace {

class ConnectionHealthFaultsTest : public DevServerOnly<RepositoryTest> {
 protected:
  // Short request timeout: a failing call gives up after 500 ms of retries.
  ConsulRepositoryOptions FastOptions() {
    ConsulRepositoryOptions options = Options();
    options.client.request_timeout = absl::Milliseconds(500);
    return options;
  }
};

TEST_F(ConnectionHealthFaultsTest, AReadOnlyInstanceHearsConsulGoAndComeBack) {
  StateRecorder recorder;  // outlives the repository that calls it
  std::unique_ptr<ConsulRepository> repository = NewRepository(FastOptions());
  repository->AddConnectionListener(recorder.Listener());
  ASSERT_TRUE(repository->Get("/a").ok());
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kConnected}))
      << StatesToString(recorder.states());

  server().FailNextRequests(1'000'000);
  EXPECT_TRUE(absl::IsUnavailable(repository->Get("/a").status()));
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kConnected, ConnectionState::kSuspended}))
      << StatesToString(recorder.states());
  server().FailNextRequests(0);
  ASSERT_TRUE(repository->Get("/a").ok());
  ASSERT_TRUE(recorder.AwaitSequence(
      {ConnectionState::kConnected, ConnectionState::kSuspended, ConnectionState::kReconnected}))
      << StatesToString(recorder.states());
  EXPECT_EQ(SessionOf(*repository), "") << "reads and the states need no session";
}

TEST_F(ConnectionHealthFaultsTest, AWatchOnlyInstanceHearsConsulGoAndComeBack) {
  StateRecorder recorder;  // outlives the repository that calls it
  std::unique_ptr<ConsulRepository> repository = NewRepository(FastOptions());
  repository->AddConnectionListener(recorder.Listener());
  ASSERT_TRUE(repository->Watch("/config", [](const DataChangedEvent&) {}).ok());
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kConnected}))
      << StatesToString(recorder.states());

  // The watch's next blocking read (at most block_query_wait, 1 s, away) fails.
  server().FailNextRequests(1'000'000);
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kConnected, ConnectionState::kSuspended}))
      << StatesToString(recorder.states());
  server().FailNextRequests(0);
  ASSERT_TRUE(recorder.AwaitSequence(
      {ConnectionState::kConnected, ConnectionState::kSuspended, ConnectionState::kReconnected}))
      << StatesToString(recorder.states());
}

TEST_F(ConnectionHealthFaultsTest, ACallThatCannotReachConsulSuspendsALiveSessionAtOnce) {
  StateRecorder recorder;  // outlives the repository that calls it
  ConsulRepositoryOptions options = FastOptions();
  // The next renewal is 30 s away, twice the recorder's patience: only the failed call below
  // can make the state SUSPENDED in time.
  options.session_ttl = absl::Seconds(60);
  std::unique_ptr<ConsulRepository> repository = NewRepository(options);
  repository->AddConnectionListener(recorder.Listener());
  ASSERT_TRUE(repository->PersistEphemeral("/online/a", "a").ok());
  const std::string session = SessionOf(*repository);

  server().FailNextRequests(1'000'000);
  EXPECT_FALSE(repository->Get("/a").ok());
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kConnected, ConnectionState::kSuspended}))
      << StatesToString(recorder.states());
  // The session is checked at once and again about once a second while it fails; the first
  // check after the outage confirms it.
  server().FailNextRequests(0);
  ASSERT_TRUE(recorder.AwaitSequence(
      {ConnectionState::kConnected, ConnectionState::kSuspended, ConnectionState::kReconnected}))
      << StatesToString(recorder.states());
  EXPECT_EQ(SessionOf(*repository), session);
  EXPECT_EQ(HolderOf("ns/online/a"), session);
}

}  // namespace
}  // namespace registry::testing

// SPDX-License-Identifier: Apache-2.0
// integration/repository/repository_listeners_test.cc
//
// Connection listeners of the Consul-backed Repository: what they hear, and that one listener's
// exception neither reaches the plugin's threads nor keeps the others from hearing the state.
#include <memory>
#include <stdexcept>

#include "gtest/gtest.h"
#include "integration/repository/repository_fixture.h"

namespace registry::testing {
namespace {

using RepositoryListenersTest = RepositoryTest;

TEST_F(RepositoryListenersTest, ListenersSeeConnectedWhenTheFirstSessionIsCreated) {
  StateRecorder recorder;  // outlives the repository that calls it
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  repository->AddConnectionListener(recorder.Listener());
  ASSERT_TRUE(repository->PersistEphemeral("/a", "v").ok());
  EXPECT_TRUE(recorder.AwaitSequence({ConnectionState::kConnected}))
      << StatesToString(recorder.states());
}

TEST_F(RepositoryListenersTest, AThrowingListenerNeitherEndsTheProcessNorSilencesTheOthers) {
  StateRecorder before;
  StateRecorder after;
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  repository->AddConnectionListener(before.Listener());
  repository->AddConnectionListener(
      [](ConnectionState) { throw std::runtime_error("listener failure"); });
  repository->AddConnectionListener(after.Listener());
  ASSERT_TRUE(repository->PersistEphemeral("/a", "v").ok());
  EXPECT_TRUE(before.AwaitSequence({ConnectionState::kConnected}))
      << StatesToString(before.states());
  EXPECT_TRUE(after.AwaitSequence({ConnectionState::kConnected})) << StatesToString(after.states());
  // The repository still works, and closes (joining the thread that called the listeners).
  EXPECT_TRUE(repository->PersistEphemeral("/b", "v").ok());
  EXPECT_TRUE(repository->Close().ok());
}

}  // namespace
}  // namespace registry::testing

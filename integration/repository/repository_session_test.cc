// integration/repository/repository_session_test.cc
//
// The instance session over time: renewals failing and recovering (SUSPENDED, RECONNECTED,
// LOST), leaderless clusters, session observers, connection listeners and Close(), against the
// in-process dev server (and real Consul where no fault injection is needed).
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/repository/repository_fixture.h"
#include "repository/instance_session.h"

namespace registry::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

using RepositorySessionTest = RepositoryTest;
// Tests that need the dev server's fault injection or request counts.
class RepositorySessionFaultsTest : public DevServerOnly<RepositoryTest> {};

TEST_F(RepositorySessionFaultsTest, FailingRenewalsSuspendAndASurvivingSessionReconnects) {
  StateRecorder recorder;  // outlives the repository that calls it
  ConsulRepositoryOptions options = Options();
  options.session_ttl = absl::Seconds(4);  // room to stop the failures before it is lost
  std::unique_ptr<Repository> repository = NewRepository(options);
  repository->AddConnectionListener(recorder.Listener());
  ASSERT_TRUE(repository->PersistEphemeral("/online/a", "a").ok());
  const std::string session = SessionOf(*repository);
  // Every request answers 500 "No cluster leader" until a renewal call (retries included)
  // has failed; then the server answers again.
  server().FailNextRequests(1'000'000);
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kConnected, ConnectionState::kSuspended}))
      << StatesToString(recorder.states());
  server().FailNextRequests(0);
  ASSERT_TRUE(recorder.AwaitSequence(
      {ConnectionState::kConnected, ConnectionState::kSuspended, ConnectionState::kReconnected}))
      << StatesToString(recorder.states());
  EXPECT_EQ(SessionOf(*repository), session);
  EXPECT_EQ(HolderOf("ns/online/a"), session);
}

// Consul expires sessions on its leader only, after 2 x TTL, and a new leader restarts every
// session's timer: an election longer than the TTL does not cost the instance its session.
TEST_F(RepositorySessionFaultsTest, NoLeaderForLongerThanTheTtlKeepsTheSession) {
  StateRecorder recorder;  // outlives the repository that calls it
  ConsulRepositoryOptions options = Options();
  options.session_ttl = absl::Seconds(2);
  std::unique_ptr<Repository> repository = NewRepository(options);
  repository->AddConnectionListener(recorder.Listener());
  ASSERT_TRUE(repository->PersistEphemeral("/online/a", "a").ok());
  const std::string session = SessionOf(*repository);
  server().FailNextRequests(1'000'000);  // every request: 500 "No cluster leader"
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kConnected, ConnectionState::kSuspended}))
      << StatesToString(recorder.states());
  // The outage ends about 3 s after the last renewal: past the TTL (2 s), well within the
  // server's own expiry (2 x TTL). SUSPENDED came at about TTL/2 + TTL/4 after that renewal.
  absl::SleepFor(absl::Seconds(3) - options.session_ttl * 3 / 4);
  server().FailNextRequests(0);
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kSuspended, ConnectionState::kReconnected}))
      << StatesToString(recorder.states());
  const std::vector<ConnectionState> states = recorder.states();
  EXPECT_EQ(std::count(states.begin(), states.end(), ConnectionState::kLost), 0)
      << StatesToString(states);
  EXPECT_EQ(SessionOf(*repository), session);
  EXPECT_EQ(HolderOf("ns/online/a"), session);
}

TEST_F(RepositorySessionFaultsTest, SessionUnrenewedForATtlIsReplacedOnceTheServerAnswersAgain) {
  StateRecorder recorder;  // outlives the repository that calls it
  std::unique_ptr<Repository> repository = NewRepository();
  repository->AddConnectionListener(recorder.Listener());
  ASSERT_TRUE(repository->PersistEphemeral("/online/a", "a").ok());
  const std::string old_session = SessionOf(*repository);
  server().SetLatency(absl::Seconds(2));  // every renewal times out
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kSuspended, ConnectionState::kLost}))
      << StatesToString(recorder.states());
  server().SetLatency(absl::ZeroDuration());
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kLost, ConnectionState::kReconnected}))
      << StatesToString(recorder.states());
  EXPECT_NE(SessionOf(*repository), old_session);
  EXPECT_EQ(HolderOf("ns/online/a"), SessionOf(*repository));
}

TEST_F(RepositorySessionTest, SessionObserversLearnTheLostAndTheNewSession) {
  absl::Mutex mu;  // outlive the repository whose observer uses them
  std::vector<std::string> seen;
  std::unique_ptr<Repository> repository = NewRepository();
  InstanceSession* session = GetInstanceSession(*repository);
  session->AddSessionObserver([&](const InstanceSession::Event& event) {
    absl::MutexLock lock(&mu);
    seen.push_back(absl::StrCat(
        event.kind == InstanceSession::EventKind::kLost ? "lost:" : "created:", event.session_id));
  });
  absl::StatusOr<std::string> first = session->AcquireSessionId(absl::InfiniteFuture());
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(ExpireSession(*first).ok());
  ASSERT_TRUE(Eventually([&] {
    absl::MutexLock lock(&mu);
    return seen.size() >= 3;
  }));
  absl::MutexLock lock(&mu);
  EXPECT_EQ(seen[0], "created:" + *first);
  EXPECT_EQ(seen[1], "lost:" + *first);
  EXPECT_EQ(seen[2], "created:" + session->CurrentSessionId());
}

TEST_F(RepositorySessionTest, RemovedListenerIsNotCalledAgain) {
  StateRecorder recorder;  // outlives the repository that calls it
  std::atomic<int> calls{0};
  std::unique_ptr<Repository> repository = NewRepository();
  const int id = repository->AddConnectionListener([&](ConnectionState) { ++calls; });
  repository->AddConnectionListener(recorder.Listener());
  ASSERT_TRUE(repository->PersistEphemeral("/a", "v").ok());
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kConnected}));
  repository->RemoveConnectionListener(id);
  const int before = calls.load();
  ASSERT_TRUE(ExpireSession(SessionOf(*repository)).ok());
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kLost, ConnectionState::kReconnected}));
  EXPECT_EQ(calls.load(), before);
}

TEST_F(RepositorySessionTest, CloseTwiceSucceedsAndLaterCallsFailWithFailedPrecondition) {
  std::unique_ptr<Repository> repository = NewRepository();
  ASSERT_TRUE(repository->PersistEphemeral("/a", "v").ok());
  EXPECT_TRUE(repository->Close().ok());
  EXPECT_TRUE(repository->Close().ok());
  EXPECT_EQ(repository->Get("/a").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(repository->Persist("/a", "v").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(repository->PersistEphemeral("/a", "v").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(repository->PersistExclusiveEphemeral("/b", "v").status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      GetInstanceSession(*repository)->AcquireSessionId(absl::InfiniteFuture()).status().code(),
      absl::StatusCode::kFailedPrecondition);
}

TEST_F(RepositorySessionFaultsTest, CloseDoesNotWaitOutAStuckRenewal) {
  StateRecorder recorder;  // outlives the repository that calls it
  std::unique_ptr<Repository> repository = NewRepository();
  repository->AddConnectionListener(recorder.Listener());
  ASSERT_TRUE(repository->PersistEphemeral("/a", "v").ok());
  server().SetLatency(absl::Seconds(3));
  // Renewals are stuck (each one times out after TTL/2 and is retried at once).
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kSuspended}));
  server().SetLatency(absl::ZeroDuration());
  const absl::Time start = absl::Now();
  EXPECT_TRUE(repository->Close().ok());
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(400));
}

TEST_F(RepositorySessionTest, CloseCalledFromAListenerDoesNotDeadlock) {
  absl::Notification closed;
  std::unique_ptr<Repository> repository = NewRepository();
  repository->AddConnectionListener([&](ConnectionState state) {
    if (state == ConnectionState::kConnected) {
      EXPECT_TRUE(repository->Close().ok());
      closed.Notify();
    }
  });
  // Close() may cancel this very write: only the listener's outcome matters here.
  repository->PersistEphemeral("/a", "v").IgnoreError();
  EXPECT_TRUE(closed.WaitForNotificationWithTimeout(kPatience));
  EXPECT_EQ(*NewRepository()->Get("/a"), std::nullopt);
}

}  // namespace
}  // namespace registry::testing

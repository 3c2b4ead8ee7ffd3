// SPDX-License-Identifier: Apache-2.0
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

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/repository/repository_fixture.h"
#include "integration/testing/delay_proxy.h"
#include "repository/hold_deadline.h"
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
  std::unique_ptr<ConsulRepository> repository = NewRepository(options);
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

// "No cluster leader" from a server proves nothing about the cluster: a server on the minority
// side of a partition says so while the majority expires the session. The keeper counts the
// session lost a TTL after its last renewal whatever the answers (repository/hold_deadline.h);
// the keys come back on a new session once the server answers again.
TEST_F(RepositorySessionFaultsTest, NoLeaderAnswersForATtlCostTheSessionByTheLossDeadline) {
  StateRecorder recorder;  // outlives the repository that calls it
  ConsulRepositoryOptions options = Options();
  options.session_ttl = absl::Seconds(2);
  std::unique_ptr<ConsulRepository> repository = NewRepository(options);
  repository->AddConnectionListener(recorder.Listener());
  ASSERT_TRUE(repository->PersistEphemeral("/online/a", "a").ok());
  const std::string session = SessionOf(*repository);
  const absl::Time cut_at = absl::Now();  // the last renewal came before this
  server().FailNextRequests(1'000'000);   // every request: 500 "No cluster leader"
  ASSERT_TRUE(recorder.AwaitSequence(
      {ConnectionState::kConnected, ConnectionState::kSuspended, ConnectionState::kLost}))
      << StatesToString(recorder.states());
  // Lost a TTL after the last renewal at the latest (plus the listener hop); before the fix a
  // leaderless answer pushed the deadline back and the session was never given up.
  EXPECT_LE(absl::Now() - cut_at, options.session_ttl + absl::Milliseconds(500));
  server().FailNextRequests(0);
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kLost, ConnectionState::kReconnected}))
      << StatesToString(recorder.states());
  EXPECT_NE(SessionOf(*repository), session);
  EXPECT_EQ(HolderOf("ns/online/a"), SessionOf(*repository));
}

// A follower holds a renewal while the servers elect a leader, and answers once one is elected:
// a renewal may wait for that until the loss deadline, not just a quarter of the TTL (which made a
// routine election at a short TTL cost the session). Here every exchange takes over TTL / 4.
TEST_F(RepositorySessionFaultsTest, ARenewalHeldLongerThanAQuarterTtlStillKeepsTheSession) {
  absl::StatusOr<std::unique_ptr<integration::DelayProxy>> slow =
      integration::DelayProxy::Start(std::stoi(address().substr(address().rfind(':') + 1)));
  ASSERT_TRUE(slow.ok()) << slow.status();
  StateRecorder recorder;  // outlives the repository that calls it
  ConsulRepositoryOptions options = Options();
  options.client.servers = (*slow)->address();
  options.session_ttl = absl::Seconds(3);
  std::unique_ptr<ConsulRepository> repository = NewRepository(options);
  repository->AddConnectionListener(recorder.Listener());
  ASSERT_TRUE(repository->PersistEphemeral("/online/a", "a").ok());
  const std::string session = SessionOf(*repository);
  server().ResetRequestCounts();
  (*slow)->set_delay(absl::Milliseconds(500));  // a round trip of 1 s: over TTL / 4, under TTL / 2
  // Three renewals reach the server (each held 1 s on the way); none may cost the session.
  ASSERT_TRUE(Eventually([&] { return server().RequestCounts()["session.renew"] >= 3; },
                         4 * options.session_ttl));
  ASSERT_TRUE(Eventually([&] { return SessionOf(*repository) == session; }));
  const std::vector<ConnectionState> states = recorder.states();
  EXPECT_EQ(std::count(states.begin(), states.end(), ConnectionState::kLost), 0)
      << StatesToString(states);
  EXPECT_EQ(HolderOf("ns/online/a"), session);
}

TEST_F(RepositorySessionFaultsTest, SessionUnrenewedForATtlIsReplacedOnceTheServerAnswersAgain) {
  StateRecorder recorder;  // outlives the repository that calls it
  std::unique_ptr<ConsulRepository> repository = NewRepository();
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

// A session given up by the clock may still live on the servers (a slow election, a partition):
// until it ends, its locks stand still and its keys cannot be bound to the new session. The
// keeper destroys it, and one failed attempt is not the end: here every request fails when the
// session is lost, and once the server answers again the session must be gone well before it
// could have expired on its own.
TEST_F(RepositorySessionFaultsTest, ASessionGivenUpIsDestroyedOnceTheServerAnswersAgain) {
  StateRecorder recorder;  // outlives the repository that calls it
  ConsulRepositoryOptions options = Options();
  options.session_ttl = absl::Seconds(6);
  // A destroy call retries inside its timeout (the smaller of TTL and this): the failures must
  // outlast it to show what happens after.
  options.client.request_timeout = absl::Seconds(1);
  std::unique_ptr<ConsulRepository> repository = NewRepository(options);
  repository->AddConnectionListener(recorder.Listener());
  ASSERT_TRUE(repository->PersistEphemeral("/online/a", "a").ok());
  const std::string lost = SessionOf(*repository);
  server().FailNextRequests(1'000'000);  // every request: 500 "No cluster leader"
  ASSERT_TRUE(recorder.AwaitSequence(
      {ConnectionState::kConnected, ConnectionState::kSuspended, ConnectionState::kLost}))
      << StatesToString(recorder.states());
  // The loss came no sooner than `loss_after` past the send of the last renewal that got
  // through, and the server expires the session no sooner than 2 x TTL past that send (the dev
  // server's timer, as Consul's). Allow 500 ms for the loss to reach the listener.
  const absl::Duration loss_after =
      HoldDeadlineFor(options.session_ttl, options.session_lock_delay).loss_after;
  const absl::Time earliest_expiry =
      absl::Now() - loss_after - absl::Milliseconds(500) + 2 * options.session_ttl;
  // The keeper makes one more session create (it fails), so that whatever it tried at the loss
  // has met the failures to its end; then the server answers again.
  const uint64_t creates = server().RequestCounts()["session.create"];
  ASSERT_TRUE(Eventually([&] { return server().RequestCounts()["session.create"] > creates; }));
  server().FailNextRequests(0);
  const absl::Duration before_expiry = earliest_expiry - absl::Now();
  ASSERT_GT(before_expiry, absl::ZeroDuration()) << "the server answered too late to tell";
  EXPECT_TRUE(Eventually([&] { return !absl::c_linear_search(SessionIds(), lost); }, before_expiry))
      << "session " << lost << " was not destroyed before it could expire on its own";
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kLost, ConnectionState::kReconnected}))
      << StatesToString(recorder.states());
  EXPECT_EQ(HolderOf("ns/online/a"), SessionOf(*repository));
}

TEST_F(RepositorySessionTest, SessionObserversLearnTheLostAndTheNewSession) {
  absl::Mutex mu;  // outlive the repository whose observer uses them
  std::vector<std::string> seen;
  absl::StatusOr<ConsulInstance> instance = NewConsulInstance(Options());
  ASSERT_TRUE(instance.ok()) << instance.status();
  std::unique_ptr<ConsulRepository> repository = std::move(instance->repository);
  InstanceSession* session = &instance->locks.session;
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
  std::unique_ptr<ConsulRepository> repository = NewRepository();
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
  absl::StatusOr<ConsulInstance> instance = NewConsulInstance(Options());
  ASSERT_TRUE(instance.ok()) << instance.status();
  std::unique_ptr<ConsulRepository> repository = std::move(instance->repository);
  ASSERT_TRUE(repository->PersistEphemeral("/a", "v").ok());
  EXPECT_TRUE(repository->Close().ok());
  EXPECT_TRUE(repository->Close().ok());
  EXPECT_EQ(repository->Get("/a").status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(repository->Persist("/a", "v").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(repository->PersistEphemeral("/a", "v").code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(repository->PersistExclusiveEphemeral("/b", "v").status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(instance->locks.session.AcquireSessionId(absl::InfiniteFuture()).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST_F(RepositorySessionFaultsTest, CloseDoesNotWaitOutAStuckRenewal) {
  StateRecorder recorder;  // outlives the repository that calls it
  std::unique_ptr<ConsulRepository> repository = NewRepository();
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
  std::unique_ptr<ConsulRepository> repository = NewRepository();
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

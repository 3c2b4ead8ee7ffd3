// SPDX-License-Identifier: Apache-2.0
// integration/repository/repository_ephemeral_test.cc
//
// Ephemeral keys and the instance session: binding, takeover, exclusivity under races, Close(),
// and recovery after the session is lost, against the in-process dev server.
#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
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
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;

using RepositoryEphemeralTest = RepositoryTest;
// Tests that need the dev server's fault injection or request counts.
class RepositoryEphemeralFaultsTest : public DevServerOnly<RepositoryTest> {};

// "true" or "false", or the error: comparable in one expectation.
std::string Outcome(const absl::StatusOr<bool>& result) {
  if (!result.ok()) return result.status().ToString();
  return *result ? "true" : "false";
}

TEST_F(RepositoryEphemeralTest, PersistEphemeralBindsTheKeyToTheInstanceSession) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->PersistEphemeral("/online/a", "v").ok());
  EXPECT_THAT(*repository->Get("/online/a"), Optional(std::string("v")));
  EXPECT_NE(SessionOf(*repository), "");
  EXPECT_EQ(HolderOf("ns/online/a"), SessionOf(*repository));
}

TEST_F(RepositoryEphemeralTest, OneSessionServesEveryEphemeralKey) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(repository->PersistEphemeral(absl::StrCat("/online/", i), "v").ok());
  }
  ASSERT_TRUE(*repository->PersistExclusiveEphemeral("/leader", "v"));
  EXPECT_THAT(SessionIds(), ElementsAre(SessionOf(*repository)));
}

TEST_F(RepositoryEphemeralTest, EphemeralKeyOutlivesSeveralTtlsWhileRenewed) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->PersistEphemeral("/online/a", "v").ok());
  // The server expires an unrenewed 1 s session after 2 s: outlive that (a span, not a race).
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_THAT(*repository->Get("/online/a"), Optional(std::string("v")));
}

TEST_F(RepositoryEphemeralTest, EphemeralKeyVanishesAtOnceOnClose) {
  std::unique_ptr<ConsulRepository> owner = NewRepository();
  std::unique_ptr<ConsulRepository> observer = NewRepository();
  ASSERT_TRUE(owner->PersistEphemeral("/online/a", "v").ok());
  ASSERT_TRUE(owner->Close().ok());
  // No waiting: Close() destroyed the session before returning.
  EXPECT_EQ(*observer->Get("/online/a"), std::nullopt);
  EXPECT_THAT(SessionIds(), IsEmpty());
}

TEST_F(RepositoryEphemeralTest, PersistEphemeralTakesOverAKeyHeldByAnotherInstance) {
  std::unique_ptr<ConsulRepository> first = NewRepository();
  std::unique_ptr<ConsulRepository> second = NewRepository();
  ASSERT_TRUE(first->PersistEphemeral("/online/a", "first").ok());
  ASSERT_TRUE(second->PersistEphemeral("/online/a", "second").ok());
  EXPECT_THAT(*first->Get("/online/a"), Optional(std::string("second")));
  EXPECT_EQ(HolderOf("ns/online/a"), SessionOf(*second));
  ASSERT_TRUE(first->Close().ok());
  EXPECT_THAT(*second->Get("/online/a"), Optional(std::string("second")));
}

TEST_F(RepositoryEphemeralTest, PersistEphemeralBindsAnExistingPersistentKey) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->Persist("/a", "persistent").ok());
  ASSERT_TRUE(repository->PersistEphemeral("/a", "ephemeral").ok());
  EXPECT_EQ(HolderOf("ns/a"), SessionOf(*repository));
  ASSERT_TRUE(repository->Close().ok());
  EXPECT_THAT(raw().KvGetRaw("ns/a")->value, std::nullopt);
}

TEST_F(RepositoryEphemeralTest, PersistMakesAnEphemeralKeyPersistent) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->PersistEphemeral("/a", "ephemeral").ok());
  ASSERT_TRUE(repository->Persist("/a", "persistent").ok());
  EXPECT_EQ(HolderOf("ns/a"), "");
  ASSERT_TRUE(repository->Close().ok());
  EXPECT_THAT(raw().KvGetRaw("ns/a")->value, Optional(std::string("persistent")));
}

TEST_F(RepositoryEphemeralTest, UpdateKeepsAnEphemeralKeyBoundToTheInstance) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->PersistEphemeral("/a", "v1").ok());
  ASSERT_TRUE(repository->Update("/a", "v2").ok());
  EXPECT_EQ(HolderOf("ns/a"), SessionOf(*repository));
  EXPECT_THAT(*repository->Get("/a"), Optional(std::string("v2")));
}

TEST_F(RepositoryEphemeralTest, PersistExclusiveEphemeralIsTrueOnlyForTheCallThatCreatesTheKey) {
  std::unique_ptr<ConsulRepository> first = NewRepository();
  std::unique_ptr<ConsulRepository> second = NewRepository();
  ASSERT_TRUE(first->Persist("/persistent", "v").ok());
  EXPECT_EQ(Outcome(first->PersistExclusiveEphemeral("/leader", "first")), "true");
  EXPECT_EQ(Outcome(first->PersistExclusiveEphemeral("/leader", "again")), "false");
  EXPECT_EQ(Outcome(second->PersistExclusiveEphemeral("/leader", "second")), "false");
  EXPECT_EQ(Outcome(second->PersistExclusiveEphemeral("/persistent", "x")), "false");
  EXPECT_THAT(*second->Get("/leader"), Optional(std::string("first")));
}

TEST_F(RepositoryEphemeralTest, ExactlyOneOfManyConcurrentExclusiveClaimsWins) {
  constexpr int kInstances = 4;
  constexpr int kThreadsPerInstance = 4;
  std::vector<std::unique_ptr<Repository>> instances;
  for (int i = 0; i < kInstances; ++i) instances.push_back(NewRepository());
  for (int round = 0; round < 3; ++round) {
    const std::string key = absl::StrCat("/leader/", round);
    std::atomic<int> winners{0};
    std::atomic<int> errors{0};
    absl::Notification go;
    std::vector<std::thread> threads;
    for (int t = 0; t < kInstances * kThreadsPerInstance; ++t) {
      threads.emplace_back([&, t] {
        go.WaitForNotification();
        absl::StatusOr<bool> won =
            instances[t % kInstances]->PersistExclusiveEphemeral(key, absl::StrCat(t));
        if (!won.ok()) ++errors;
        if (won.ok() && *won) ++winners;
      });
    }
    go.Notify();
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(errors.load(), 0) << key;
    EXPECT_EQ(winners.load(), 1) << key;
  }
}

// A holder that dies (its session ends without a clean close: here Consul invalidates it, then
// the instance is closed before it could bind the key again) leaves its keys under the lock-delay.
TEST_F(RepositoryEphemeralTest, ExclusiveClaimWaitsOutTheLockDelayOfADeadHolder) {
  std::unique_ptr<ConsulRepository> dead = NewRepository();
  std::unique_ptr<ConsulRepository> next = NewRepository();
  ASSERT_TRUE(*dead->PersistExclusiveEphemeral("/leader", "dead"));
  // The lock-delay runs from the expiry: timed from there, not from after Close(), which under
  // TSan has taken longer than the whole lock-delay (the next claim then met none).
  const absl::Time start = absl::Now();
  ASSERT_TRUE(ExpireSession(SessionOf(*dead)).ok());  // deleted, under a 300 ms lock-delay
  ASSERT_TRUE(dead->Close().ok());
  EXPECT_EQ(Outcome(next->PersistExclusiveEphemeral("/leader", "next")), "true");
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(200));  // it did meet the lock-delay
  EXPECT_EQ(HolderOf("ns/leader"), SessionOf(*next));
}

TEST_F(RepositoryEphemeralTest, PersistEphemeralWaitsOutTheLockDelayOfADeadHolder) {
  std::unique_ptr<ConsulRepository> dead = NewRepository();
  std::unique_ptr<ConsulRepository> next = NewRepository();
  ASSERT_TRUE(dead->PersistEphemeral("/online/a", "dead").ok());
  const absl::Time start = absl::Now();  // the lock-delay runs from the expiry (see above)
  ASSERT_TRUE(ExpireSession(SessionOf(*dead)).ok());
  ASSERT_TRUE(dead->Close().ok());
  ASSERT_TRUE(next->PersistEphemeral("/online/a", "next").ok());
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(200));
  EXPECT_EQ(HolderOf("ns/online/a"), SessionOf(*next));
}

// A clean close deletes its keys before it ends the session, so they carry no lock-delay: the
// next instance claims them at once, as after a ZooKeeper close (ShardingSphere reserves worker
// ids with exclusive claims when an instance starts, and retries a refused one at once).
TEST_F(RepositoryEphemeralTest, AfterACleanCloseTheNextInstanceClaimsTheKeysAtOnce) {
  ConsulRepositoryOptions options = Options();
  options.session_lock_delay = absl::Seconds(60);  // the longest Consul allows
  std::unique_ptr<ConsulRepository> closed = NewRepository(options);
  std::unique_ptr<ConsulRepository> next = NewRepository(options);
  ASSERT_TRUE(*closed->PersistExclusiveEphemeral("/reservation/worker_id/0", "closed"));
  ASSERT_TRUE(closed->PersistEphemeral("/online/a", "closed").ok());
  ASSERT_TRUE(closed->Close().ok());
  const absl::Time start = absl::Now();
  EXPECT_EQ(Outcome(next->PersistExclusiveEphemeral("/reservation/worker_id/0", "next")), "true");
  ASSERT_TRUE(next->PersistEphemeral("/online/a", "next").ok());
  // Had the keys kept a lock-delay, each claim would have waited the whole 60 s.
  EXPECT_LT(absl::Now() - start, absl::Seconds(30));
  EXPECT_EQ(HolderOf("ns/reservation/worker_id/0"), SessionOf(*next));
  EXPECT_EQ(HolderOf("ns/online/a"), SessionOf(*next));
}

// The close deletes only what its session still holds: a key another instance took over stays.
TEST_F(RepositoryEphemeralTest, ACleanCloseLeavesAKeyAnotherInstanceTookOver) {
  std::unique_ptr<ConsulRepository> first = NewRepository();
  std::unique_ptr<ConsulRepository> second = NewRepository();
  ASSERT_TRUE(first->PersistEphemeral("/online/a", "first").ok());
  ASSERT_TRUE(first->PersistEphemeral("/online/b", "first").ok());
  ASSERT_TRUE(second->PersistEphemeral("/online/a", "second").ok());  // takes it over
  ASSERT_TRUE(first->Close().ok());
  absl::StatusOr<std::optional<std::string>> taken = second->Get("/online/a");
  absl::StatusOr<std::optional<std::string>> own = second->Get("/online/b");
  ASSERT_TRUE(taken.ok() && own.ok()) << taken.status() << own.status();
  EXPECT_THAT(*taken, Optional(std::string("second")));
  EXPECT_EQ(HolderOf("ns/online/a"), SessionOf(*second));
  EXPECT_EQ(*own, std::nullopt);
}

TEST_F(RepositoryEphemeralTest, TheLockPartsShareTheRepositorysKeySpaceSettingsAndSession) {
  absl::StatusOr<ConsulInstance> instance = NewConsulInstance(Options("governance_ds"));
  ASSERT_TRUE(instance.ok()) << instance.status();
  const lock::LockManagerParts& parts = instance->locks;
  EXPECT_EQ(parts.key_space.ConsulKey("/lock/a"), "governance_ds/lock/a");
  EXPECT_EQ(parts.lock_retry, absl::Milliseconds(50));
  EXPECT_EQ(parts.session.CurrentSessionId(), "");  // no ephemeral use yet
  ASSERT_TRUE(instance->repository->PersistEphemeral("/online/a", "1").ok());
  EXPECT_EQ(parts.session.CurrentSessionId(), HolderOf("governance_ds/online/a"));
  EXPECT_EQ(parts.session.CurrentSessionId(), instance->repository->CurrentSessionId());
  EXPECT_NE(parts.session.CurrentSessionId(), "");
}

TEST_F(RepositoryEphemeralTest, ForceExpiredSessionIsReplacedAndEveryEphemeralKeyComesBack) {
  StateRecorder recorder;  // outlives the repository that calls it
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  repository->AddConnectionListener(recorder.Listener());
  ASSERT_TRUE(repository->PersistEphemeral("/online/a", "a").ok());
  ASSERT_TRUE(*repository->PersistExclusiveEphemeral("/leader", "me"));
  ASSERT_TRUE(repository->PersistEphemeral("/online/b", "b").ok());
  ASSERT_TRUE(repository->Update("/online/b", "b2").ok());
  const std::string old_session = SessionOf(*repository);

  ASSERT_TRUE(ExpireSession(old_session).ok());
  ASSERT_TRUE(recorder.AwaitSequence(
      {ConnectionState::kConnected, ConnectionState::kLost, ConnectionState::kReconnected}))
      << StatesToString(recorder.states());

  const std::string new_session = SessionOf(*repository);
  EXPECT_NE(new_session, old_session);
  EXPECT_NE(new_session, "");
  EXPECT_THAT(*repository->Get("/online/a"), Optional(std::string("a")));
  EXPECT_THAT(*repository->Get("/online/b"), Optional(std::string("b2")));
  EXPECT_THAT(*repository->Get("/leader"), Optional(std::string("me")));
  for (const char* key : {"ns/online/a", "ns/online/b", "ns/leader"}) {
    EXPECT_EQ(HolderOf(key), new_session) << key;
  }
}

TEST_F(RepositoryEphemeralFaultsTest, LostReplyOfAnEphemeralWriteIsResentAndTheKeyRemembered) {
  StateRecorder recorder;  // outlives the repository that calls it
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  repository->AddConnectionListener(recorder.Listener());
  const uint64_t txns = server().RequestCounts()["txn"];
  server().DropNextReplies(1, "/v1/txn", "PUT");  // the bind is applied, its reply lost
  absl::Status written = repository->PersistEphemeral("/online/a", "a");
  ASSERT_TRUE(written.ok()) << written;
  // A lock by the key's holder applies the same again, so the lone lock is resent.
  EXPECT_EQ(server().RequestCounts()["txn"], txns + 2) << "applied, reply lost, resent";
  EXPECT_EQ(HolderOf("ns/online/a"), SessionOf(*repository));
  // Remembered like any bound key: it comes back once the session is lost.
  ASSERT_TRUE(ExpireSession(SessionOf(*repository)).ok());
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kLost, ConnectionState::kReconnected}))
      << StatesToString(recorder.states());
  EXPECT_THAT(*repository->Get("/online/a"), Optional(std::string("a")));
  EXPECT_EQ(HolderOf("ns/online/a"), SessionOf(*repository));
}

TEST_F(RepositoryEphemeralFaultsTest, BindingAKeyNoOtherInstanceHoldsIsOneKeptAliveRequest) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  ASSERT_TRUE(repository->PersistEphemeral("/warm", "up").ok());  // session and connection exist
  ASSERT_TRUE(repository->Persist("/unheld", "p").ok());
  server().ResetRequestCounts();
  const uint64_t connections = server().accepted_connection_count();
  ASSERT_TRUE(repository->PersistEphemeral("/online/a", "a").ok());   // absent
  ASSERT_TRUE(repository->PersistEphemeral("/online/a", "a2").ok());  // ours, a new value
  ASSERT_TRUE(repository->PersistEphemeral("/online/a", "a2").ok());  // ours, the same value
  ASSERT_TRUE(repository->PersistEphemeral("/unheld", "e").ok());     // persistent until now
  EXPECT_THAT(server().RequestCounts(),
              ElementsAre(std::pair<const std::string, uint64_t>("txn", 4)));
  EXPECT_EQ(server().accepted_connection_count(), connections) << "a bind opened a connection";
  EXPECT_THAT(*repository->Get("/online/a"), Optional(std::string("a2")));
  EXPECT_EQ(HolderOf("ns/online/a"), SessionOf(*repository));
  EXPECT_EQ(HolderOf("ns/unheld"), SessionOf(*repository));
}

TEST_F(RepositoryEphemeralFaultsTest,
       LostReplyOfAnExclusiveCreateStillAnswersWhetherItCreatedTheKey) {
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  server().DropNextReplies(1, "/v1/txn", "PUT");  // the create is applied, its reply lost
  EXPECT_EQ(Outcome(repository->PersistExclusiveEphemeral("/leader", "me")), "true");
  EXPECT_EQ(HolderOf("ns/leader"), SessionOf(*repository));
  // Refused because the key exists, reply lost: still "exists", though the key holds our value.
  server().DropNextReplies(1, "/v1/txn", "PUT");
  EXPECT_EQ(Outcome(repository->PersistExclusiveEphemeral("/leader", "me")), "false");
}

TEST_F(RepositoryEphemeralTest, DeletedEphemeralKeyIsNotBroughtBackAfterASessionLoss) {
  StateRecorder recorder;  // outlives the repository that calls it
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  repository->AddConnectionListener(recorder.Listener());
  ASSERT_TRUE(repository->PersistEphemeral("/online/a", "a").ok());
  ASSERT_TRUE(repository->PersistEphemeral("/online/gone", "x").ok());
  ASSERT_TRUE(repository->Delete("/online/gone").ok());
  ASSERT_TRUE(ExpireSession(SessionOf(*repository)).ok());
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kLost, ConnectionState::kReconnected}));
  EXPECT_THAT(*repository->GetChildrenKeys("/online"), ElementsAre("a"));
}

// Consul answers 500 when a raft apply times out on the leader and is committed later. The
// delete's outcome is unknown to its caller, and it may land: the key must not come back.
TEST_F(RepositoryEphemeralFaultsTest, DeleteAnsweredServerErrorButAppliedIsNotBroughtBack) {
  StateRecorder recorder;  // outlives the repository that calls it
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  repository->AddConnectionListener(recorder.Listener());
  ASSERT_TRUE(repository->PersistEphemeral("/online/a", "a").ok());
  ASSERT_TRUE(repository->PersistEphemeral("/online/gone", "x").ok());
  server().FailNextRepliesAfterApplying(1, "/v1/txn", "PUT");
  absl::Status deleted = repository->Delete("/online/gone");
  EXPECT_THAT(deleted.message(), HasSubstr("outcome unknown")) << deleted;
  ASSERT_TRUE(ExpireSession(SessionOf(*repository)).ok());
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kLost, ConnectionState::kReconnected}));
  EXPECT_THAT(*repository->GetChildrenKeys("/online"), ElementsAre("a"));
}

// An update whose reply was lost may have landed: a rebind after a session loss writes the new
// value, never the one the update may have replaced.
TEST_F(RepositoryEphemeralFaultsTest, UpdateWithALostReplyIsReboundWithTheNewValue) {
  StateRecorder recorder;  // outlives the repository that calls it
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  repository->AddConnectionListener(recorder.Listener());
  ASSERT_TRUE(repository->PersistEphemeral("/online/a", "old").ok());
  server().DropNextReplies(1, "/v1/txn", "PUT");  // the update is applied, its reply lost
  absl::Status updated = repository->Update("/online/a", "new");
  EXPECT_EQ(updated.code(), absl::StatusCode::kUnavailable) << updated;
  EXPECT_THAT(*repository->Get("/online/a"), Optional(std::string("new")));
  ASSERT_TRUE(ExpireSession(SessionOf(*repository)).ok());
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kLost, ConnectionState::kReconnected}))
      << StatesToString(recorder.states());
  EXPECT_THAT(*repository->Get("/online/a"), Optional(std::string("new")));
  EXPECT_EQ(HolderOf("ns/online/a"), SessionOf(*repository));
}

// Listeners never run on the thread that renews and re-creates the session, so one that waits
// for the new session (an ephemeral write during LOST) gets it.
TEST_F(RepositoryEphemeralTest, LostListenerMayMakeAnEphemeralWriteThatWaitsForTheNewSession) {
  StateRecorder recorder;  // outlives the repository that calls it
  absl::Notification wrote;
  absl::Status written;
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  Repository* self = repository.get();
  repository->AddConnectionListener([&, self](ConnectionState state) {
    if (state != ConnectionState::kLost || wrote.HasBeenNotified()) return;
    written = self->PersistEphemeral("/online/from-listener", "x");
    wrote.Notify();
  });
  repository->AddConnectionListener(recorder.Listener());
  ASSERT_TRUE(repository->PersistEphemeral("/online/a", "a").ok());
  ASSERT_TRUE(ExpireSession(SessionOf(*repository)).ok());
  ASSERT_TRUE(wrote.WaitForNotificationWithTimeout(kPatience));
  EXPECT_TRUE(written.ok()) << written;
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kLost, ConnectionState::kReconnected}))
      << StatesToString(recorder.states());
  EXPECT_THAT(*repository->Get("/online/from-listener"), Optional(std::string("x")));
  EXPECT_EQ(HolderOf("ns/online/from-listener"), SessionOf(*repository));
}

// 100 keys, 25 ms per request, TTL 1 s: binding them again one by one (a read and a txn each)
// takes about 5 s, four TTLs. Renewal has a thread of its own, and the keys go back in batches.
TEST_F(RepositoryEphemeralFaultsTest, RestoringManyKeysOverASlowLinkNeverCostsTheNewSession) {
  constexpr int kKeys = 100;
  StateRecorder recorder;  // outlives the repository that calls it
  std::unique_ptr<ConsulRepository> repository = NewRepository();
  repository->AddConnectionListener(recorder.Listener());
  for (int i = 0; i < kKeys; ++i) {
    ASSERT_TRUE(repository->PersistEphemeral(absl::StrCat("/many/k", i), "v").ok());
  }
  server().SetLatency(absl::Milliseconds(25));
  const uint64_t creates = server().RequestCounts()["session.create"];
  ASSERT_TRUE(ExpireSession(SessionOf(*repository)).ok());
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kLost, ConnectionState::kReconnected}))
      << StatesToString(recorder.states());
  server().SetLatency(absl::ZeroDuration());
  EXPECT_EQ(server().RequestCounts()["session.create"], creates + 1)
      << "the new session was lost too: " << StatesToString(recorder.states());
  EXPECT_EQ(repository->GetChildrenKeys("/many")->size(), size_t{kKeys});
  EXPECT_EQ(HolderOf("ns/many/k99"), SessionOf(*repository));
}

// The give-up rule counts from when an attempt was sent, not from when its answer came: over a
// slow link a claim sent inside the dead holder's lock-delay is refused and answered after the
// deadline, and the next claim (sent after the delay ended) must still be made.
TEST_F(RepositoryEphemeralFaultsTest, AClaimRefusedByTheLockDelayButAnsweredLateIsTriedOnceMore) {
  ConsulRepositoryOptions options = Options();
  options.session_lock_delay = absl::Milliseconds(600);  // a claim gives up 700 ms after its call
  std::unique_ptr<ConsulRepository> dead = NewRepository(options);
  std::unique_ptr<ConsulRepository> next = NewRepository(options);
  ASSERT_TRUE(*dead->PersistExclusiveEphemeral("/leader", "dead"));
  ASSERT_TRUE(next->PersistEphemeral("/online/next", "v").ok());  // its session exists already
  ASSERT_TRUE(ExpireSession(SessionOf(*dead)).ok());
  ASSERT_TRUE(dead->Close().ok());
  // The claim's txn is handled 400 ms after it is sent, inside the delay; the read that tells
  // the refusal from an existing key 400 ms later, past the 700 ms.
  server().SetLatency(absl::Milliseconds(400));
  const absl::StatusOr<bool> claimed = next->PersistExclusiveEphemeral("/leader", "next");
  server().SetLatency(absl::ZeroDuration());
  EXPECT_EQ(Outcome(claimed), "true");
  EXPECT_EQ(HolderOf("ns/leader"), SessionOf(*next));
}

TEST_F(RepositoryEphemeralTest, ExclusiveKeyTakenByAnotherInstanceMeanwhileIsNotStolenBack) {
  StateRecorder recorder;  // outlives the repository that calls it
  std::unique_ptr<ConsulRepository> first = NewRepository();
  first->AddConnectionListener(recorder.Listener());
  std::unique_ptr<ConsulRepository> second = NewRepository();
  ASSERT_TRUE(*first->PersistExclusiveEphemeral("/leader", "first"));
  ASSERT_TRUE(ExpireSession(SessionOf(*first)).ok());
  // Whoever is faster after the lock-delay wins; a later winner must not lose the key.
  absl::StatusOr<bool> second_won = second->PersistExclusiveEphemeral("/leader", "second");
  ASSERT_TRUE(second_won.ok()) << second_won.status();
  ASSERT_TRUE(recorder.AwaitSequence({ConnectionState::kLost, ConnectionState::kReconnected}));
  const std::string holder = HolderOf("ns/leader");
  EXPECT_EQ(holder, *second_won ? SessionOf(*second) : SessionOf(*first));
}

}  // namespace
}  // namespace registry::testing

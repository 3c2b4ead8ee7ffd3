// SPDX-License-Identifier: Apache-2.0
// Store-level session rules: validation, acquire/release and LockIndex, invalidation with
// release/delete behaviour, lock-delay, TTL expiry (on a fake clock).
#include "devserver/store.h"
#include "tests/devserver/store_test_util.h"

namespace registry::devserver {
namespace {

using testing::FakeClock;
using testing::MakeStore;
using testing::MustApply;
using testing::MustCreateSession;
using testing::Op;
using testing::Set;

class StoreSessionTest : public ::testing::Test {
 protected:
  bool Acquire(const std::string& key, const std::string& session, const std::string& value = "v") {
    return MustApply(*store_, Op(KvVerb::kLock, key, value, 0, session));
  }
  bool Release(const std::string& key, const std::string& session) {
    return MustApply(*store_, Op(KvVerb::kUnlock, key, "v", 0, session));
  }
  absl::Status CreateError(SessionCreateRequest request) {
    return store_->CreateSession(request).status();
  }

  FakeClock clock_;
  std::unique_ptr<Store> store_ = MakeStore(&clock_);
};

TEST_F(StoreSessionTest, CreatedSessionCarriesConsulDefaults) {
  const std::string id = MustCreateSession(*store_);
  Store::SessionsRead read = store_->GetSession(id);
  ASSERT_EQ(read.sessions.size(), 1u);
  const SessionEntry& session = read.sessions[0];
  EXPECT_EQ(session.node, "node1");
  EXPECT_EQ(session.lock_delay, absl::Seconds(15));
  EXPECT_EQ(session.behavior, SessionBehavior::kRelease);
  EXPECT_EQ(session.node_checks, std::vector<std::string>{"serfHealth"});
  EXPECT_EQ(read.index, session.create_index);
  EXPECT_EQ(id.size(), 36u);
}

TEST_F(StoreSessionTest, CreateRejectsATtlOutsideTheAllowedRange) {
  SessionCreateRequest request;
  request.node = "node1";
  request.ttl = "500ms";
  EXPECT_EQ(CreateError(request).message(),
            "Invalid Session TTL '500000000', must be between [1s=24h0m0s]");
  request.ttl = "25h";
  EXPECT_FALSE(CreateError(request).ok());
  request.ttl = "soon";
  EXPECT_EQ(CreateError(request).message(),
            "Session TTL 'soon' invalid: time: invalid duration \"soon\"");
  request.ttl = "0s";  // zero means no TTL
  EXPECT_TRUE(CreateError(request).ok());
}

TEST_F(StoreSessionTest, CreateRejectsUnknownNodeBehaviorAndChecksWithConsulMessages) {
  SessionCreateRequest request;
  request.node = "elsewhere";
  EXPECT_EQ(CreateError(request).message(), "Missing node registration");
  request.node = "";
  EXPECT_EQ(CreateError(request).message(), "Must provide Node");
  request.node = "node1";
  request.behavior = "explode";
  EXPECT_EQ(CreateError(request).message(), "Invalid Behavior setting 'explode'");
  request.behavior = "delete";
  request.node_checks = {"serfHealth", "disk"};
  EXPECT_EQ(CreateError(request).message(), "Missing check 'disk' registration");
}

TEST_F(StoreSessionTest, AcquireOfANewKeyStartsLockIndexAtOne) {
  const std::string session = MustCreateSession(*store_);
  EXPECT_TRUE(Acquire("lock", session));
  const DirEntry entry = *store_->Get("lock").entry;
  EXPECT_EQ(entry.lock_index, 1u);
  EXPECT_EQ(entry.session, session);
}

TEST_F(StoreSessionTest, ReacquireByTheHolderKeepsLockIndex) {
  const std::string session = MustCreateSession(*store_);
  ASSERT_TRUE(Acquire("lock", session, "a"));
  EXPECT_TRUE(Acquire("lock", session, "b"));
  EXPECT_EQ(store_->Get("lock").entry->lock_index, 1u);
  EXPECT_EQ(store_->Get("lock").entry->value, "b");
}

TEST_F(StoreSessionTest, AcquireOfAKeyHeldByAnotherSessionFails) {
  const std::string first = MustCreateSession(*store_);
  const std::string second = MustCreateSession(*store_);
  ASSERT_TRUE(Acquire("lock", first));
  EXPECT_FALSE(Acquire("lock", second));
  EXPECT_EQ(store_->Get("lock").entry->session, first);
}

TEST_F(StoreSessionTest, ReleaseClearsTheSessionKeepsLockIndexAndNextAcquireIncrements) {
  const std::string session = MustCreateSession(*store_);
  ASSERT_TRUE(Acquire("lock", session));
  const uint64_t held_at = store_->Get("lock").entry->modify_index;
  EXPECT_TRUE(Release("lock", session));
  const DirEntry released = *store_->Get("lock").entry;
  EXPECT_EQ(released.session, "");
  EXPECT_EQ(released.lock_index, 1u);
  EXPECT_GT(released.modify_index, held_at);
  EXPECT_TRUE(Acquire("lock", session));
  EXPECT_EQ(store_->Get("lock").entry->lock_index, 2u);
}

TEST_F(StoreSessionTest, ReleaseByANonHolderOrOfAMissingKeyFails) {
  const std::string holder = MustCreateSession(*store_);
  const std::string other = MustCreateSession(*store_);
  ASSERT_TRUE(Acquire("lock", holder));
  EXPECT_FALSE(Release("lock", other));
  EXPECT_FALSE(Release("missing", holder));
  EXPECT_EQ(store_->Get("lock").entry->session, holder);
}

TEST_F(StoreSessionTest, AcquireWithAnUnknownOrEmptySessionIsAnError) {
  EXPECT_EQ(store_->Apply(Op(KvVerb::kLock, "k", "v", 0, "00000000-0000-4000-8000-000000000000"))
                .status()
                .message(),
            "invalid session \"00000000-0000-4000-8000-000000000000\"");
  EXPECT_EQ(store_->Apply(Op(KvVerb::kLock, "k", "v", 0, "nope")).status().message(),
            "failed session lookup: index error: UUID must be 36 characters");
  EXPECT_EQ(store_->Apply(Op(KvVerb::kLock, "k", "v", 0, "")).status().message(),
            "missing session");
  EXPECT_FALSE(store_->Get("k").entry.has_value());
}

TEST_F(StoreSessionTest, PlainPutOnALockedKeyKeepsTheHolder) {
  const std::string session = MustCreateSession(*store_);
  ASSERT_TRUE(Acquire("lock", session));
  Set(*store_, "lock", "overwritten");
  EXPECT_EQ(store_->Get("lock").entry->session, session);
  EXPECT_EQ(store_->Get("lock").entry->value, "overwritten");
}

TEST_F(StoreSessionTest, DestroyReleasesHeldKeysAndStartsLockDelay) {
  const std::string session = MustCreateSession(*store_);
  ASSERT_TRUE(Acquire("lock", session, "kept"));
  const uint64_t held_at = store_->Get("lock").entry->modify_index;
  ASSERT_TRUE(store_->DestroySession(session));
  const DirEntry entry = *store_->Get("lock").entry;
  EXPECT_EQ(entry.session, "");
  EXPECT_EQ(entry.value, "kept");
  EXPECT_EQ(entry.lock_index, 1u);
  EXPECT_GT(entry.modify_index, held_at);
  EXPECT_EQ(store_->LockDelayExpiry("lock"), clock_.Now() + absl::Seconds(15));
}

TEST_F(StoreSessionTest, LockDelayRefusesAnyAcquireUntilItEnds) {
  const std::string first = MustCreateSession(*store_, "", "release", absl::Seconds(5));
  const std::string second = MustCreateSession(*store_);
  ASSERT_TRUE(Acquire("lock", first));
  ASSERT_TRUE(store_->DestroySession(first));
  EXPECT_FALSE(Acquire("lock", second));
  Set(*store_, "lock", "plain put still works");
  clock_.Advance(absl::Seconds(5) - absl::Milliseconds(1));
  EXPECT_FALSE(Acquire("lock", second));
  clock_.Advance(absl::Milliseconds(1));
  EXPECT_TRUE(Acquire("lock", second));
}

TEST_F(StoreSessionTest, ExplicitReleaseStartsNoLockDelay) {
  const std::string first = MustCreateSession(*store_);
  const std::string second = MustCreateSession(*store_);
  ASSERT_TRUE(Acquire("lock", first));
  ASSERT_TRUE(Release("lock", first));
  EXPECT_EQ(store_->LockDelayExpiry("lock"), absl::InfinitePast());
  EXPECT_TRUE(Acquire("lock", second));
}

TEST_F(StoreSessionTest, LockDelayIsCappedAtSixtySeconds) {
  const std::string session = MustCreateSession(*store_, "", "release", absl::Minutes(5));
  ASSERT_TRUE(Acquire("lock", session));
  ASSERT_TRUE(store_->DestroySession(session));
  EXPECT_EQ(store_->LockDelayExpiry("lock"), clock_.Now() + absl::Seconds(60));
  EXPECT_EQ(store_->GetSession(session).sessions.size(), 0u);
}

TEST_F(StoreSessionTest, ZeroLockDelayLetsAnotherSessionAcquireAtOnce) {
  const std::string first = MustCreateSession(*store_, "", "release", absl::ZeroDuration());
  const std::string second = MustCreateSession(*store_);
  ASSERT_TRUE(Acquire("lock", first));
  ASSERT_TRUE(store_->DestroySession(first));
  EXPECT_TRUE(Acquire("lock", second));
}

TEST_F(StoreSessionTest, DeleteBehaviorDeletesHeldKeysOnInvalidation) {
  const std::string session = MustCreateSession(*store_, "", "delete");
  ASSERT_TRUE(Acquire("eph/a", session));
  ASSERT_TRUE(Acquire("eph/b", session));
  Set(*store_, "eph/plain", "stays");
  ASSERT_TRUE(store_->DestroySession(session));
  EXPECT_FALSE(store_->Get("eph/a").entry.has_value());
  EXPECT_FALSE(store_->Get("eph/b").entry.has_value());
  EXPECT_TRUE(store_->Get("eph/plain").entry.has_value());
  EXPECT_EQ(store_->List("eph/").index, store_->last_index());  // tombstones raise the index
  EXPECT_GT(store_->LockDelayExpiry("eph/a"), clock_.Now());
}

TEST_F(StoreSessionTest, TtlSessionExpiresTwoTtlsAfterCreation) {
  const std::string session = MustCreateSession(*store_, "1s");
  ASSERT_TRUE(Acquire("lock", session));
  clock_.Advance(absl::Seconds(2) - absl::Milliseconds(1));
  store_->Tick();
  EXPECT_EQ(store_->GetSession(session).sessions.size(), 1u);
  clock_.Advance(absl::Milliseconds(1));
  store_->Tick();
  EXPECT_EQ(store_->GetSession(session).sessions.size(), 0u);
  EXPECT_EQ(store_->Get("lock").entry->session, "");
}

TEST_F(StoreSessionTest, RenewRestartsTheTtlTimerWithoutChangingIndexes) {
  const std::string session = MustCreateSession(*store_, "1s");
  const uint64_t index = store_->last_index();
  clock_.Advance(absl::Milliseconds(1500));
  ASSERT_TRUE(store_->RenewSession(session).has_value());
  EXPECT_EQ(store_->last_index(), index);
  clock_.Advance(absl::Milliseconds(1500));  // 3 s after creation, 1.5 s after renewal
  store_->Tick();
  EXPECT_EQ(store_->GetSession(session).sessions.size(), 1u);
  clock_.Advance(absl::Milliseconds(500));
  store_->Tick();
  EXPECT_EQ(store_->GetSession(session).sessions.size(), 0u);
}

TEST_F(StoreSessionTest, RenewOfAnUnknownSessionReturnsNothing) {
  EXPECT_FALSE(store_->RenewSession("00000000-0000-0000-0000-000000000000").has_value());
}

TEST_F(StoreSessionTest, TickReportsTheNextSessionDeadlineAndCreationAnnouncesIt) {
  absl::Time announced = absl::InfiniteFuture();
  store_->SetDeadlineListener([&](absl::Time deadline) { announced = deadline; });
  EXPECT_EQ(store_->Tick(), absl::InfiniteFuture());
  MustCreateSession(*store_, "10s");
  EXPECT_EQ(announced, clock_.Now() + absl::Seconds(20));
  EXPECT_EQ(store_->Tick(), clock_.Now() + absl::Seconds(20));
}

TEST_F(StoreSessionTest, SessionWatchFiresOnCreateAndDestroy) {
  int woken = 0;
  ASSERT_TRUE(
      store_->Watch(WatchScope::Sessions(), store_->ListSessions().version, [&] { ++woken; }));
  const std::string session = MustCreateSession(*store_);
  EXPECT_EQ(woken, 1);
  ASSERT_TRUE(
      store_->Watch(WatchScope::Sessions(), store_->ListSessions().version, [&] { ++woken; }));
  store_->DestroySession(session);
  EXPECT_EQ(woken, 2);
}

TEST_F(StoreSessionTest, NodeSessionsListsOnlyThatNodesSessions) {
  MustCreateSession(*store_);
  EXPECT_EQ(store_->NodeSessions("node1").sessions.size(), 1u);
  EXPECT_EQ(store_->NodeSessions("node2").sessions.size(), 0u);
  EXPECT_EQ(store_->ListSessions().sessions.size(), 1u);
}

}  // namespace
}  // namespace registry::devserver

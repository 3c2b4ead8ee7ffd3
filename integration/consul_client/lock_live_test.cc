// SPDX-License-Identifier: Apache-2.0
// Live acquire/release (session locks on KV keys) through registry::consul::Client.
#include <string>

#include "gtest/gtest.h"
#include "integration/consul_client/live_fixture.h"
#include "integration/testing/eventually.h"

namespace registry::consul::live {
namespace {

using LockLiveTest = LiveClientTest;

TEST_F(LockLiveTest, AcquireCreatesTheKeyHeldByTheSessionWithLockIndexOne) {
  const std::string session = NewSession(PlainSession("holder"));
  ASSERT_FALSE(session.empty());
  ASSERT_OK_AND_ASSIGN(bool acquired,
                       client().KvPut("locks/a", "owner-1", {.flags = 3, .acquire = session}));
  EXPECT_TRUE(acquired);
  std::optional<DirEntry> entry = Lookup("locks/a");
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->session, session);
  EXPECT_EQ(entry->lock_index, 1u);
  EXPECT_EQ(entry->value, "owner-1");
  EXPECT_EQ(entry->flags, 3u);
}

TEST_F(LockLiveTest, ReacquireBySameSessionSucceedsWithoutBumpingLockIndex) {
  const std::string session = NewSession(PlainSession("holder"));
  ASSERT_OK_AND_ASSIGN(bool first, client().KvPut("locks/a", "v1", {.acquire = session}));
  ASSERT_TRUE(first);
  ASSERT_OK_AND_ASSIGN(bool again, client().KvPut("locks/a", "v2", {.acquire = session}));
  EXPECT_TRUE(again);
  EXPECT_EQ(Lookup("locks/a")->lock_index, 1u);
  EXPECT_EQ(Lookup("locks/a")->value, "v2");
}

TEST_F(LockLiveTest, AcquireIsRefusedWhileAnotherSessionHoldsTheKey) {
  const std::string holder = NewSession(PlainSession("holder"));
  const std::string rival = NewSession(PlainSession("rival"));
  ASSERT_OK_AND_ASSIGN(bool held, client().KvPut("locks/a", "mine", {.acquire = holder}));
  ASSERT_TRUE(held);
  ASSERT_OK_AND_ASSIGN(bool stolen, client().KvPut("locks/a", "theirs", {.acquire = rival}));
  EXPECT_FALSE(stolen);
  std::optional<DirEntry> entry = Lookup("locks/a");
  EXPECT_EQ(entry->session, holder);
  EXPECT_EQ(entry->value, "mine");
}

TEST_F(LockLiveTest, ReleaseClearsTheSessionAndKeepsLockIndex) {
  const std::string session = NewSession(PlainSession("holder"));
  ASSERT_OK_AND_ASSIGN(bool acquired, client().KvPut("locks/a", "v", {.acquire = session}));
  ASSERT_TRUE(acquired);
  ASSERT_OK_AND_ASSIGN(bool released, client().KvPut("locks/a", "free", {.release = session}));
  EXPECT_TRUE(released);
  std::optional<DirEntry> entry = Lookup("locks/a");
  EXPECT_EQ(entry->session, "");
  EXPECT_EQ(entry->lock_index, 1u);
  EXPECT_EQ(entry->value, "free");
}

TEST_F(LockLiveTest, ReleaseByASessionThatDoesNotHoldTheKeyIsRefused) {
  const std::string holder = NewSession(PlainSession("holder"));
  const std::string rival = NewSession(PlainSession("rival"));
  ASSERT_OK_AND_ASSIGN(bool acquired, client().KvPut("locks/a", "v", {.acquire = holder}));
  ASSERT_TRUE(acquired);
  ASSERT_OK_AND_ASSIGN(bool released, client().KvPut("locks/a", "v", {.release = rival}));
  EXPECT_FALSE(released);
  EXPECT_EQ(Lookup("locks/a")->session, holder);
}

TEST_F(LockLiveTest, AcquireAfterReleaseBumpsLockIndex) {
  const std::string first = NewSession(PlainSession("first"));
  const std::string second = NewSession(PlainSession("second"));
  ASSERT_OK_AND_ASSIGN(bool a, client().KvPut("locks/a", "v", {.acquire = first}));
  ASSERT_OK_AND_ASSIGN(bool r, client().KvPut("locks/a", "v", {.release = first}));
  ASSERT_OK_AND_ASSIGN(bool b, client().KvPut("locks/a", "v", {.acquire = second}));
  ASSERT_TRUE(a && r && b);
  EXPECT_EQ(Lookup("locks/a")->lock_index, 2u);
  EXPECT_EQ(Lookup("locks/a")->session, second);
}

TEST_F(LockLiveTest, AcquireWithAnUnknownSessionIsFailedPrecondition) {
  absl::StatusOr<bool> acquired =
      client().KvPut("locks/a", "v", {.acquire = "00000000-0000-0000-0000-000000000000"});
  EXPECT_EQ(acquired.status().code(), absl::StatusCode::kFailedPrecondition) << acquired.status();
  EXPECT_FALSE(Lookup("locks/a").has_value());
}

TEST_F(LockLiveTest, LockDelayAfterDestroyRefusesAcquireUntilItPasses) {
  constexpr absl::Duration kLockDelay = absl::Milliseconds(500);
  SessionCreateOptions delayed = PlainSession("delayed");
  delayed.lock_delay = kLockDelay;
  const std::string holder = NewSession(delayed);
  const std::string next = NewSession(PlainSession("next"));
  ASSERT_OK_AND_ASSIGN(bool held, client().KvPut("locks/a", "v", {.acquire = holder}));
  ASSERT_TRUE(held);

  const absl::Time destroyed = absl::Now();
  ASSERT_OK(client().DestroySession(holder));
  ASSERT_EQ(Lookup("locks/a")->session, "");  // released, not deleted
  ASSERT_OK_AND_ASSIGN(bool during_delay, client().KvPut("locks/a", "v", {.acquire = next}));
  EXPECT_FALSE(during_delay);

  // Poll: the lock-delay ends without any notification a blocking query could wait on. An
  // error ends the wait as well, and fails the test below.
  absl::StatusOr<bool> acquired = false;
  registry::testing::Eventually(
      [&] {
        acquired = client().KvPut("locks/a", "v", {.acquire = next});
        return !acquired.ok() || *acquired;
      },
      kPatience, absl::Milliseconds(20));  // each check is a write: one every 20 ms
  const absl::Duration waited = absl::Now() - destroyed;
  ASSERT_OK(acquired.status());
  ASSERT_TRUE(*acquired) << "still refused after " << waited;
  EXPECT_GE(waited, kLockDelay - absl::Milliseconds(20));
  EXPECT_EQ(Lookup("locks/a")->session, next);
}

TEST_F(LockLiveTest, ExplicitReleaseSetsNoLockDelay) {
  SessionCreateOptions delayed = PlainSession("delayed");
  delayed.lock_delay = absl::Seconds(30);
  const std::string holder = NewSession(delayed);
  const std::string next = NewSession(PlainSession("next"));
  ASSERT_OK_AND_ASSIGN(bool held, client().KvPut("locks/a", "v", {.acquire = holder}));
  ASSERT_OK_AND_ASSIGN(bool released, client().KvPut("locks/a", "v", {.release = holder}));
  ASSERT_TRUE(held && released);
  ASSERT_OK_AND_ASSIGN(bool acquired, client().KvPut("locks/a", "v", {.acquire = next}));
  EXPECT_TRUE(acquired);
}

TEST_F(LockLiveTest, PlainPutOnAHeldKeyKeepsTheHolder) {
  const std::string holder = NewSession(PlainSession("holder"));
  ASSERT_OK_AND_ASSIGN(bool held, client().KvPut("locks/a", "v", {.acquire = holder}));
  ASSERT_TRUE(held);
  ASSERT_OK_AND_ASSIGN(bool put, client().KvPut("locks/a", "overwritten"));
  EXPECT_TRUE(put);
  EXPECT_EQ(Lookup("locks/a")->session, holder);
  EXPECT_EQ(Lookup("locks/a")->value, "overwritten");
}

}  // namespace
}  // namespace registry::consul::live

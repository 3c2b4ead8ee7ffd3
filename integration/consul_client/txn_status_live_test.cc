// SPDX-License-Identifier: Apache-2.0
// Live transactions and the status endpoint through registry::consul::Client.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "integration/consul_client/live_fixture.h"

namespace registry::consul::live {
namespace {

using TxnLiveTest = LiveClientTest;
// Tests that need the dev server's fault injection, request counts or a second server.
class TxnLiveFaultsTest : public registry::testing::DevServerOnly<LiveClientTest> {};

TEST_F(TxnLiveTest, CommittedTransactionAppliesEveryOperationAtOneIndex) {
  const uint64_t config_index = Put("t/config", "c1");
  ASSERT_GT(Put("t/old/x", "1"), 0u);
  ASSERT_GT(Put("t/old/y", "2"), 0u);
  const std::vector<TxnOp> ops = {
      TxnOp::CheckIndex("t/config", config_index),
      TxnOp::Set("t/a", "A", 5),
      TxnOp::Set("t/b", "B"),
      TxnOp::DeleteTree("t/old/"),
      TxnOp::Get("t/config"),
  };
  ASSERT_OK_AND_ASSIGN(TxnResult txn, client().Txn(ops));
  ASSERT_TRUE(txn.committed);
  EXPECT_TRUE(txn.errors.empty());
  // As in Consul: check-index yields the checked entry (value blanked), writes the written entry
  // (value blanked), get the entry; delete-tree yields nothing.
  ASSERT_EQ(txn.results.size(), 4u);
  EXPECT_EQ(txn.results[0].key, "t/config");
  EXPECT_EQ(txn.results[0].value, "");
  EXPECT_EQ(txn.results[1].key, "t/a");
  EXPECT_EQ(txn.results[1].flags, 5u);
  EXPECT_EQ(txn.results[1].value, "");
  EXPECT_EQ(txn.results[2].key, "t/b");
  EXPECT_EQ(txn.results[3].key, "t/config");
  EXPECT_EQ(txn.results[3].value, "c1");

  std::optional<DirEntry> a = Lookup("t/a");
  std::optional<DirEntry> b = Lookup("t/b");
  ASSERT_TRUE(a.has_value() && b.has_value());
  EXPECT_EQ(a->value, "A");
  EXPECT_EQ(b->value, "B");
  EXPECT_EQ(a->modify_index, b->modify_index);
  EXPECT_EQ(txn.results[1].modify_index, a->modify_index);
  ASSERT_OK_AND_ASSIGN(KvListResult old, client().KvList("t/old/"));
  EXPECT_TRUE(old.entries.empty());
}

TEST_F(TxnLiveTest, FailingOperationRollsBackTheWholeTransactionAndNamesTheOp) {
  const uint64_t config_index = Put("t/config", "c1");
  ASSERT_GT(Put("t/keep", "k"), 0u);
  const std::vector<TxnOp> ops = {
      TxnOp::Set("t/new", "N"),
      TxnOp::CheckIndex("t/config", config_index + 1000),
      TxnOp::Delete("t/keep"),
  };
  ASSERT_OK_AND_ASSIGN(TxnResult txn, client().Txn(ops));
  EXPECT_FALSE(txn.committed);
  EXPECT_TRUE(txn.results.empty());
  ASSERT_EQ(txn.errors.size(), 1u);
  EXPECT_EQ(txn.errors[0].op_index, 1u);
  EXPECT_TRUE(absl::StrContains(txn.errors[0].what, "t/config")) << txn.errors[0].what;
  EXPECT_EQ(txn.errors[0].failure, TxnFailure::kCheckFailed) << txn.errors[0].what;
  EXPECT_FALSE(Lookup("t/new").has_value());
  EXPECT_TRUE(Lookup("t/keep").has_value());
  EXPECT_EQ(Lookup("t/config")->modify_index, config_index);
}

TEST_F(TxnLiveTest, GetTreeReadsEveryEntryUnderThePrefix) {
  ASSERT_GT(Put("t/tree/1", "one"), 0u);
  ASSERT_GT(Put("t/tree/2", "two"), 0u);
  ASSERT_GT(Put("t/treetop", "no"), 0u);
  const std::vector<TxnOp> ops = {TxnOp::GetTree("t/tree/")};
  ASSERT_OK_AND_ASSIGN(TxnResult txn, client().Txn(ops));
  ASSERT_TRUE(txn.committed);
  ASSERT_EQ(txn.results.size(), 2u);
  EXPECT_EQ(txn.results[0].key, "t/tree/1");
  EXPECT_EQ(txn.results[0].value, "one");
  EXPECT_EQ(txn.results[1].key, "t/tree/2");
}

TEST_F(TxnLiveTest, LockAndCheckSessionFenceAWriteOnTheHolder) {
  const std::string holder = NewSession(PlainSession("holder"));
  const std::string rival = NewSession(PlainSession("rival"));
  const std::vector<TxnOp> lock = {TxnOp::Lock("t/lock", "held", holder)};
  ASSERT_OK_AND_ASSIGN(TxnResult locked, client().Txn(lock));
  ASSERT_TRUE(locked.committed);
  EXPECT_EQ(Lookup("t/lock")->session, holder);

  const std::vector<TxnOp> fenced_by_rival = {TxnOp::CheckSession("t/lock", rival),
                                              TxnOp::Set("t/data", "rival")};
  ASSERT_OK_AND_ASSIGN(TxnResult refused, client().Txn(fenced_by_rival));
  EXPECT_FALSE(refused.committed);
  EXPECT_TRUE(refused.FailedWith(TxnFailure::kCheckFailed));
  EXPECT_FALSE(Lookup("t/data").has_value());

  const std::vector<TxnOp> fenced_by_holder = {TxnOp::CheckSession("t/lock", holder),
                                               TxnOp::Set("t/data", "holder")};
  ASSERT_OK_AND_ASSIGN(TxnResult applied, client().Txn(fenced_by_holder));
  EXPECT_TRUE(applied.committed);
  EXPECT_EQ(Lookup("t/data")->value, "holder");
}

// Why a lone lock may be resent after a lost reply (consul::ReplaySafe): its holder
// repeating it commits again and changes nothing, not even the index a watcher waits on.
TEST_F(TxnLiveTest, ALockRepeatedByItsHolderCommitsAgainAndChangesNothing) {
  const std::string holder = NewSession(PlainSession("holder"));
  const std::vector<TxnOp> lock = {TxnOp::Lock("t/held", "v", holder)};
  ASSERT_OK_AND_ASSIGN(TxnResult first, client().Txn(lock));
  ASSERT_TRUE(first.committed);
  const std::optional<DirEntry> before = Lookup("t/held");
  ASSERT_TRUE(before.has_value());
  ASSERT_OK_AND_ASSIGN(TxnResult again, client().Txn(lock));
  ASSERT_TRUE(again.committed);
  ASSERT_EQ(again.results.size(), 1u);
  EXPECT_EQ(again.results[0].modify_index, before->modify_index);
  const std::optional<DirEntry> after = Lookup("t/held");
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->modify_index, before->modify_index);
  EXPECT_EQ(after->lock_index, before->lock_index);
  EXPECT_EQ(after->session, holder);
  EXPECT_EQ(after->value, "v");
}

TEST_F(TxnLiveTest, CasCheckNotExistsAndDeleteCasApplyOnlyOnTheExpectedState) {
  const uint64_t index = Put("t/c", "v1");
  const std::vector<TxnOp> ops = {TxnOp::Cas("t/c", "v2", index), TxnOp::CheckNotExists("t/n"),
                                  TxnOp::GetOrEmpty("t/n")};
  ASSERT_OK_AND_ASSIGN(TxnResult txn, client().Txn(ops));
  ASSERT_TRUE(txn.committed);
  // As in Consul: cas yields the written entry, check-not-exists nothing, and get-or-empty of an
  // absent key an entry holding only the key.
  ASSERT_EQ(txn.results.size(), 2u);
  EXPECT_EQ(txn.results[0].key, "t/c");
  EXPECT_EQ(txn.results[1].key, "t/n");
  EXPECT_EQ(txn.results[1].value, "");
  EXPECT_EQ(txn.results[1].create_index, 0u);
  const uint64_t updated = Lookup("t/c")->modify_index;
  EXPECT_EQ(Lookup("t/c")->value, "v2");

  const std::vector<TxnOp> stale = {TxnOp::DeleteCas("t/c", index)};
  ASSERT_OK_AND_ASSIGN(TxnResult refused, client().Txn(stale));
  EXPECT_FALSE(refused.committed);
  ASSERT_EQ(refused.errors.size(), 1u);
  EXPECT_EQ(refused.errors[0].op_index, 0u);
  EXPECT_EQ(refused.errors[0].failure, TxnFailure::kCheckFailed) << refused.errors[0].what;

  const std::vector<TxnOp> current = {TxnOp::DeleteCas("t/c", updated)};
  ASSERT_OK_AND_ASSIGN(TxnResult deleted, client().Txn(current));
  EXPECT_TRUE(deleted.committed);
  EXPECT_FALSE(Lookup("t/c").has_value());
}

// The refusals the repository and the locks act on, typed from the server's own reasons.
TEST_F(TxnLiveTest, LockRefusalsAreTypedFromTheServersReasons) {
  const std::string holder = NewSession(PlainSession("holder"));
  const std::string rival = NewSession(PlainSession("rival"));
  const std::vector<TxnOp> lock = {TxnOp::Lock("t/held", "v", holder)};
  ASSERT_OK_AND_ASSIGN(TxnResult locked, client().Txn(lock));
  ASSERT_TRUE(locked.committed);

  const std::vector<TxnOp> taken = {TxnOp::Lock("t/held", "v", rival)};
  ASSERT_OK_AND_ASSIGN(TxnResult held, client().Txn(taken));
  ASSERT_EQ(held.errors.size(), 1u);
  EXPECT_EQ(held.errors[0].failure, TxnFailure::kAlreadyHeld) << held.errors[0].what;

  const std::vector<TxnOp> exists = {TxnOp::CheckNotExists("t/held")};
  ASSERT_OK_AND_ASSIGN(TxnResult existing, client().Txn(exists));
  ASSERT_EQ(existing.errors.size(), 1u);
  EXPECT_EQ(existing.errors[0].failure, TxnFailure::kCheckFailed) << existing.errors[0].what;

  ASSERT_OK(client().DestroySession(rival));
  ASSERT_OK_AND_ASSIGN(TxnResult gone, client().Txn(taken));
  ASSERT_EQ(gone.errors.size(), 1u);
  EXPECT_EQ(gone.errors[0].failure, TxnFailure::kInvalidSession) << gone.errors[0].what;
}

TEST_F(TxnLiveTest, ALockOfAKeyUnderLockDelayIsTypedLockDelay) {
  SessionCreateOptions delayed = PlainSession("delayed");
  delayed.lock_delay = absl::Seconds(30);
  const std::string first = NewSession(delayed);
  const std::string second = NewSession(PlainSession("second"));
  const std::vector<TxnOp> lock = {TxnOp::Lock("t/delayed", "v", first)};
  ASSERT_OK_AND_ASSIGN(TxnResult locked, client().Txn(lock));
  ASSERT_TRUE(locked.committed);
  // Destroying the holder's session releases the key under the session's lock-delay.
  ASSERT_OK(client().DestroySession(first));
  const std::vector<TxnOp> relock = {TxnOp::Lock("t/delayed", "v", second)};
  ASSERT_OK_AND_ASSIGN(TxnResult refused, client().Txn(relock));
  ASSERT_EQ(refused.errors.size(), 1u);
  EXPECT_EQ(refused.errors[0].failure, TxnFailure::kLockDelay) << refused.errors[0].what;
  EXPECT_FALSE(refused.FailedWith(TxnFailure::kAlreadyHeld));
}

TEST_F(TxnLiveFaultsTest, TooManyOperationsAreRefusedWithoutARequest) {
  std::vector<TxnOp> ops;
  for (size_t i = 0; i <= kMaxTxnOps; ++i) ops.push_back(TxnOp::Set("t/k", "v"));
  absl::StatusOr<TxnResult> txn = client().Txn(ops);
  EXPECT_EQ(txn.status().code(), absl::StatusCode::kInvalidArgument) << txn.status();
  EXPECT_EQ(TxnFailureOf(txn.status()), TxnFailure::kTooManyOperations) << txn.status();
  EXPECT_EQ(RequestCount(server(), "txn"), 0u);
}

TEST_F(TxnLiveTest, MaximumNumberOfOperationsIsAccepted) {
  std::vector<TxnOp> ops;
  for (size_t i = 0; i < kMaxTxnOps; ++i) ops.push_back(TxnOp::Set(absl::StrCat("t/k", i), "v"));
  ASSERT_OK_AND_ASSIGN(TxnResult txn, client().Txn(ops));
  EXPECT_TRUE(txn.committed);
  ASSERT_OK_AND_ASSIGN(KvKeysResult keys, client().KvKeys("t/"));
  EXPECT_EQ(keys.keys.size(), kMaxTxnOps);
}

using StatusLiveTest = LiveClientTest;

// HOST:PORT of the server RPC listener: :8300 on the dev server, the agent's server port on a
// consul agent -dev started by the test.
TEST_F(StatusLiveTest, LeaderNamesTheServerRpcAddress) {
  ASSERT_OK_AND_ASSIGN(std::string leader, client().Leader());
  const size_t colon = leader.rfind(':');
  ASSERT_NE(colon, std::string::npos) << leader;
  int port = 0;
  EXPECT_TRUE(absl::SimpleAtoi(leader.substr(colon + 1), &port) && port > 0) << leader;
  if (!real_consul()) {
    EXPECT_EQ(port, 8300) << leader;
  }
}

}  // namespace
}  // namespace registry::consul::live

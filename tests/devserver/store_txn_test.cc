// SPDX-License-Identifier: Apache-2.0
// Store-level transactions: atomicity, one index, per-op errors with Consul's messages.
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

class StoreTxnTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  std::unique_ptr<Store> store_ = MakeStore(&clock_);
};

TEST_F(StoreTxnTest, AllWritesOfATransactionShareOneNewIndex) {
  const uint64_t before = store_->last_index();
  TxnOutcome outcome = store_->Txn(
      {Op(KvVerb::kSet, "a", "1"), Op(KvVerb::kSet, "b", "2"), Op(KvVerb::kSet, "c", "3")});
  ASSERT_TRUE(outcome.errors.empty());
  EXPECT_EQ(store_->last_index(), before + 1);
  for (const char* key : {"a", "b", "c"}) {
    EXPECT_EQ(store_->Get(key).entry->modify_index, before + 1) << key;
  }
}

TEST_F(StoreTxnTest, AFailingOpRollsBackEveryEarlierWrite) {
  Set(*store_, "keep", "original");
  Set(*store_, "doomed", "present");
  const uint64_t before = store_->last_index();
  const Store::ListRead list_before = store_->List("");
  TxnOutcome outcome =
      store_->Txn({Op(KvVerb::kSet, "keep", "changed"), Op(KvVerb::kDelete, "doomed"),
                   Op(KvVerb::kSet, "new", "x"), Op(KvVerb::kCheckIndex, "keep", "", 1)});
  ASSERT_EQ(outcome.errors.size(), 1u);
  EXPECT_TRUE(outcome.results.empty());
  EXPECT_EQ(store_->Get("keep").entry->value, "original");
  EXPECT_EQ(store_->Get("doomed").entry->value, "present");
  EXPECT_FALSE(store_->Get("new").entry.has_value());
  EXPECT_EQ(store_->last_index(), before);
  EXPECT_EQ(store_->List("").index, list_before.index);  // no tombstone left behind
}

TEST_F(StoreTxnTest, EveryFailingOpIsReportedWithItsIndexAndConsulsMessage) {
  Set(*store_, "exists", "v");
  const std::string session = MustCreateSession(*store_);
  TxnOutcome outcome = store_->Txn({
      Op(KvVerb::kGet, "missing"),
      Op(KvVerb::kCas, "exists", "v2", 1),
      Op(KvVerb::kCheckNotExists, "exists"),
      Op(KvVerb::kCheckSession, "exists", "", 0, session),
      Op(KvVerb::kUnlock, "exists", "", 0, session),
      Op(KvVerb::kDeleteCas, "exists", "", 1),
      Op(KvVerb::kSet, "fine", "ok"),
  });
  ASSERT_EQ(outcome.errors.size(), 6u);
  EXPECT_EQ(outcome.errors[0].op_index, 0);
  EXPECT_EQ(outcome.errors[0].what, "key \"missing\" doesn't exist");
  EXPECT_EQ(outcome.errors[1].what, "failed to set key \"exists\", index is stale");
  EXPECT_EQ(outcome.errors[2].what, "key \"exists\" exists");
  EXPECT_EQ(outcome.errors[3].what,
            "failed session check for key \"exists\", current session \"\" != \"" + session + "\"");
  EXPECT_EQ(outcome.errors[4].what,
            "failed to unlock key \"exists\", lock isn't held, or is held by another session");
  EXPECT_EQ(outcome.errors[5].op_index, 5);
  EXPECT_EQ(outcome.errors[5].what, "failed to delete key \"exists\", index is stale");
  EXPECT_FALSE(store_->Get("fine").entry.has_value());
}

TEST_F(StoreTxnTest, ReadsReturnValuesAndWritesReturnEntriesWithoutValues) {
  Set(*store_, "t/a", "A");
  Set(*store_, "t/b", "B");
  TxnOutcome outcome = store_->Txn({Op(KvVerb::kSet, "t/c", "C"), Op(KvVerb::kGet, "t/a"),
                                    Op(KvVerb::kGetTree, "t/"), Op(KvVerb::kDelete, "t/b")});
  ASSERT_TRUE(outcome.errors.empty());
  // set -> 1 entry without value; get -> 1 with value; get-tree -> 3 (a, b, c); delete -> none.
  ASSERT_EQ(outcome.results.size(), 5u);
  EXPECT_EQ(outcome.results[0].key, "t/c");
  EXPECT_EQ(outcome.results[0].value, "");
  EXPECT_EQ(outcome.results[1].value, "A");
  EXPECT_EQ(outcome.results[2].key, "t/a");
  EXPECT_EQ(outcome.results[4].key, "t/c");
  EXPECT_EQ(outcome.results[4].value, "C");  // later ops see earlier writes
}

TEST_F(StoreTxnTest, GetOrEmptyEchoesTheRequestForAMissingKey) {
  KvOp op = Op(KvVerb::kGetOrEmpty, "missing", "ignored", 9, "s");
  op.flags = 4;
  TxnOutcome outcome = store_->Txn({op});
  ASSERT_EQ(outcome.results.size(), 1u);
  EXPECT_EQ(outcome.results[0].key, "missing");
  EXPECT_EQ(outcome.results[0].value, "");
  EXPECT_EQ(outcome.results[0].flags, 4u);
  EXPECT_EQ(outcome.results[0].modify_index, 9u);
}

TEST_F(StoreTxnTest, LockDuringLockDelayFailsBeforeAnythingRuns) {
  const std::string first = MustCreateSession(*store_);
  const std::string second = MustCreateSession(*store_);
  ASSERT_TRUE(MustApply(*store_, Op(KvVerb::kLock, "lock", "v", 0, first)));
  ASSERT_TRUE(store_->DestroySession(first));
  TxnOutcome outcome =
      store_->Txn({Op(KvVerb::kSet, "other", "x"), Op(KvVerb::kLock, "lock", "v", 0, second)});
  ASSERT_EQ(outcome.errors.size(), 1u);
  EXPECT_EQ(outcome.errors[0].op_index, 1);
  EXPECT_EQ(outcome.errors[0].what, "failed to lock key \"lock\" due to lock delay");
  EXPECT_FALSE(store_->Get("other").entry.has_value());
}

TEST_F(StoreTxnTest, FencedWriteSucceedsOnlyWhileTheSessionHoldsTheLock) {
  const std::string session = MustCreateSession(*store_);
  ASSERT_TRUE(MustApply(*store_, Op(KvVerb::kLock, "lock", "", 0, session)));
  TxnOutcome held = store_->Txn(
      {Op(KvVerb::kCheckSession, "lock", "", 0, session), Op(KvVerb::kSet, "data", "v1")});
  EXPECT_TRUE(held.errors.empty());
  ASSERT_TRUE(store_->DestroySession(session));
  TxnOutcome lost = store_->Txn(
      {Op(KvVerb::kCheckSession, "lock", "", 0, session), Op(KvVerb::kSet, "data", "v2")});
  EXPECT_EQ(lost.errors.size(), 1u);
  EXPECT_EQ(store_->Get("data").entry->value, "v1");
}

TEST_F(StoreTxnTest, UndecodableOpFailsWithItsMessageWhileOthersAreStillChecked) {
  KvOp bad = Op(KvVerb::kGet, "k");
  bad.error = "unknown KV verb \"frobnicate\"";
  TxnOutcome outcome = store_->Txn({Op(KvVerb::kSet, "a", "1"), bad, Op(KvVerb::kGet, "nope")});
  ASSERT_EQ(outcome.errors.size(), 2u);
  EXPECT_EQ(outcome.errors[0].op_index, 1);
  EXPECT_EQ(outcome.errors[0].what, "unknown KV verb \"frobnicate\"");
  EXPECT_EQ(outcome.errors[1].op_index, 2);
  EXPECT_FALSE(store_->Get("a").entry.has_value());
}

TEST_F(StoreTxnTest, EmptyKeyIsRejectedUpFront) {
  TxnOutcome outcome = store_->Txn({Op(KvVerb::kSet, "", "v")});
  ASSERT_EQ(outcome.errors.size(), 1u);
  EXPECT_EQ(outcome.errors[0].what, "Must provide key");
}

TEST_F(StoreTxnTest, ReadOnlyTransactionConsumesNoIndex) {
  Set(*store_, "a", "1");
  const uint64_t before = store_->last_index();
  TxnOutcome outcome = store_->Txn({Op(KvVerb::kGet, "a"), Op(KvVerb::kGetOrEmpty, "b")});
  EXPECT_TRUE(outcome.errors.empty());
  EXPECT_EQ(store_->last_index(), before);
}

}  // namespace
}  // namespace registry::devserver

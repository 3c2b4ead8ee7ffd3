// SPDX-License-Identifier: Apache-2.0
// Store-level KV rules: indexes, tombstones, CAS, identical writes, keys/separator, watches,
// index reset.
#include <atomic>

#include "devserver/store.h"
#include "tests/devserver/store_test_util.h"

namespace registry::devserver {
namespace {

using testing::FakeClock;
using testing::MakeStore;
using testing::MustApply;
using testing::Op;
using testing::Set;

class StoreKvTest : public ::testing::Test {
 protected:
  FakeClock clock_;
  std::unique_ptr<Store> store_ = MakeStore(&clock_);
};

TEST_F(StoreKvTest, MissingKeyReportsTheTableIndex) {
  Set(*store_, "a", "1");
  Set(*store_, "b", "2");
  Store::KeyRead read = store_->Get("missing");
  EXPECT_FALSE(read.entry.has_value());
  EXPECT_EQ(read.index, store_->Get("b").entry->modify_index);
}

TEST_F(StoreKvTest, FirstWriteGetsAnIndexAboveOne) {
  // Index 1 is what clients see for an empty store; a key created at 1 would never wake them.
  Set(*store_, "a", "1");
  EXPECT_GT(store_->Get("a").entry->create_index, 1u);
}

TEST_F(StoreKvTest, EveryEffectiveWriteGetsAHigherIndex) {
  uint64_t last = store_->last_index();
  for (int i = 0; i < 5; ++i) {
    Set(*store_, "k" + std::to_string(i % 2), std::to_string(i));
    EXPECT_GT(store_->last_index(), last);
    last = store_->last_index();
  }
}

TEST_F(StoreKvTest, UpdateKeepsCreateIndexAndMovesModifyIndex) {
  Set(*store_, "a", "1");
  const DirEntry first = *store_->Get("a").entry;
  Set(*store_, "a", "2");
  const DirEntry second = *store_->Get("a").entry;
  EXPECT_EQ(second.create_index, first.create_index);
  EXPECT_GT(second.modify_index, first.modify_index);
  EXPECT_EQ(second.value, "2");
}

TEST_F(StoreKvTest, IdenticalWriteChangesNoIndexAndWakesNobody) {
  Set(*store_, "a", "same");
  const Store::KeyRead before = store_->Get("a");
  bool woken = false;
  ASSERT_TRUE(store_->Watch(WatchScope::Key("a"), before.version, [&] { woken = true; }));
  Set(*store_, "a", "same");
  EXPECT_EQ(store_->Get("a").entry->modify_index, before.entry->modify_index);
  EXPECT_EQ(store_->last_index(), before.index);
  EXPECT_FALSE(woken);
}

TEST_F(StoreKvTest, WriteWithOtherFlagsIsNotIdentical) {
  Set(*store_, "a", "same");
  const uint64_t before = store_->Get("a").entry->modify_index;
  KvOp op = Op(KvVerb::kSet, "a", "same");
  op.flags = 7;
  EXPECT_TRUE(MustApply(*store_, op));
  EXPECT_GT(store_->Get("a").entry->modify_index, before);
  EXPECT_EQ(store_->Get("a").entry->flags, 7u);
}

TEST_F(StoreKvTest, CasZeroCreatesOnlyWhenAbsent) {
  EXPECT_TRUE(MustApply(*store_, Op(KvVerb::kCas, "a", "first", 0)));
  EXPECT_FALSE(MustApply(*store_, Op(KvVerb::kCas, "a", "second", 0)));
  EXPECT_EQ(store_->Get("a").entry->value, "first");
}

TEST_F(StoreKvTest, CasSucceedsOnlyWithTheCurrentModifyIndex) {
  Set(*store_, "a", "1");
  const uint64_t index = store_->Get("a").entry->modify_index;
  EXPECT_FALSE(MustApply(*store_, Op(KvVerb::kCas, "a", "stale", index - 1)));
  EXPECT_TRUE(MustApply(*store_, Op(KvVerb::kCas, "a", "fresh", index)));
  EXPECT_EQ(store_->Get("a").entry->value, "fresh");
  EXPECT_FALSE(MustApply(*store_, Op(KvVerb::kCas, "absent", "x", 5)));
}

TEST_F(StoreKvTest, DeleteCasTreatsAnAbsentKeyAsDeletedAndZeroAsNoMatch) {
  EXPECT_TRUE(MustApply(*store_, Op(KvVerb::kDeleteCas, "absent", "", 3)));
  Set(*store_, "a", "1");
  EXPECT_FALSE(MustApply(*store_, Op(KvVerb::kDeleteCas, "a", "", 0)));
  const uint64_t index = store_->Get("a").entry->modify_index;
  EXPECT_TRUE(MustApply(*store_, Op(KvVerb::kDeleteCas, "a", "", index)));
  EXPECT_FALSE(store_->Get("a").entry.has_value());
}

TEST_F(StoreKvTest, DeleteLeavesATombstoneThatRaisesThePrefixIndex) {
  Set(*store_, "p/a", "1");
  Set(*store_, "p/b", "2");
  Set(*store_, "other", "x");
  ASSERT_TRUE(MustApply(*store_, Op(KvVerb::kDelete, "p/b")));
  const uint64_t deleted_at = store_->last_index();
  Set(*store_, "other", "y");
  Store::ListRead list = store_->List("p/");
  ASSERT_EQ(list.entries.size(), 1u);
  EXPECT_EQ(list.index, deleted_at);  // not p/a's older index, not the newer table index
}

TEST_F(StoreKvTest, PrefixWithNeitherKeysNorTombstonesReportsTheTableIndex) {
  Set(*store_, "a", "1");
  Store::ListRead list = store_->List("nothing/");
  EXPECT_TRUE(list.entries.empty());
  EXPECT_EQ(list.index, store_->last_index());
}

TEST_F(StoreKvTest, DeleteTreeRemovesTheSubtreeAndLeavesOnePrefixTombstone) {
  Set(*store_, "t/a", "1");
  Set(*store_, "t/b/c", "2");
  Set(*store_, "u", "3");
  ASSERT_TRUE(MustApply(*store_, Op(KvVerb::kDeleteTree, "t/")));
  const uint64_t deleted_at = store_->last_index();
  Set(*store_, "u", "4");
  EXPECT_TRUE(store_->List("t/").entries.empty());
  EXPECT_EQ(store_->List("t/").index, deleted_at);
  EXPECT_TRUE(store_->Get("u").entry.has_value());
}

TEST_F(StoreKvTest, KeysWithSeparatorCutAfterTheFirstSeparatorAndDeduplicate) {
  for (const char* key : {"foo", "foo/bar", "foo/bar/baz", "foo/bar/zip", "foo/bar/zip/zam",
                          "foo/bar/zip/zorp", "some/other"}) {
    Set(*store_, key, "v");
  }
  EXPECT_EQ(store_->Keys("foo/bar/", "/").keys,
            (std::vector<std::string>{"foo/bar/baz", "foo/bar/zip", "foo/bar/zip/"}));
  EXPECT_EQ(store_->Keys("", "/").keys, (std::vector<std::string>{"foo", "foo/", "some/"}));
  EXPECT_EQ(store_->Keys("foo", "").keys.size(), 6u);
}

TEST_F(StoreKvTest, KeyWatchFiresOnlyForItsOwnKey) {
  int woken = 0;
  ASSERT_TRUE(
      store_->Watch(WatchScope::Key("watched"), store_->Get("watched").version, [&] { ++woken; }));
  Set(*store_, "watched-not", "1");
  Set(*store_, "other", "1");
  EXPECT_EQ(woken, 0);
  Set(*store_, "watched", "1");
  EXPECT_EQ(woken, 1);
  Set(*store_, "watched", "2");
  EXPECT_EQ(woken, 1);  // one-shot
}

TEST_F(StoreKvTest, PrefixWatchFiresForADeleteUnderThePrefix) {
  Set(*store_, "p/a", "1");
  int woken = 0;
  ASSERT_TRUE(
      store_->Watch(WatchScope::Prefix("p/"), store_->List("p/").version, [&] { ++woken; }));
  Set(*store_, "q/a", "1");
  EXPECT_EQ(woken, 0);
  ASSERT_TRUE(MustApply(*store_, Op(KvVerb::kDelete, "p/a")));
  EXPECT_EQ(woken, 1);
}

TEST_F(StoreKvTest, WokenWatchCountCountsTheWatchesAWriteFiredNotCancelledOnes) {
  for (const char* key : {"a", "a", "b"}) {
    ASSERT_TRUE(store_->Watch(WatchScope::Key(key), store_->Get(key).version, [] {}));
  }
  auto cancelled = store_->Watch(WatchScope::Key("a"), store_->Get("a").version, [] {});
  ASSERT_TRUE(cancelled.has_value());
  store_->CancelWatch(*cancelled);
  Set(*store_, "a", "1");
  EXPECT_EQ(store_->woken_watch_count(), 2u);  // the two on "a"; "b" still waits
  store_->ResetWokenWatchCount();
  Set(*store_, "b", "1");
  EXPECT_EQ(store_->woken_watch_count(), 1u);
}

TEST_F(StoreKvTest, WatchFromAnOutdatedVersionIsRefused) {
  const uint64_t version = store_->Get("a").version;
  Set(*store_, "b", "1");
  EXPECT_FALSE(store_->Watch(WatchScope::Key("a"), version, [] {}).has_value());
  EXPECT_EQ(store_->watch_count(), 0u);
}

TEST_F(StoreKvTest, CancelledWatchNeverFires) {
  bool woken = false;
  auto id = store_->Watch(WatchScope::Key("a"), store_->Get("a").version, [&] { woken = true; });
  ASSERT_TRUE(id.has_value());
  store_->CancelWatch(*id);
  Set(*store_, "a", "1");
  EXPECT_FALSE(woken);
  EXPECT_EQ(store_->watch_count(), 0u);
}

TEST_F(StoreKvTest, ResetIndexMovesIndexesBackAndLaterWritesClimbFromTheBase) {
  for (int i = 0; i < 20; ++i) Set(*store_, "k", std::to_string(i));
  ASSERT_GT(store_->last_index(), 20u);
  store_->ResetIndex(3);
  EXPECT_EQ(store_->Get("k").entry->modify_index, 3u);
  EXPECT_EQ(store_->Get("k").entry->value, "19");
  Set(*store_, "k", "after");
  EXPECT_EQ(store_->Get("k").entry->modify_index, 4u);
  Set(*store_, "j", "after");
  EXPECT_EQ(store_->Get("j").entry->modify_index, 5u);
}

TEST_F(StoreKvTest, ResetIndexFiresEveryWatchAndBumpsTheEpoch) {
  std::atomic<int> woken = 0;
  const uint64_t version = store_->Get("a").version;
  ASSERT_TRUE(store_->Watch(WatchScope::Key("a"), version, [&] { ++woken; }));
  ASSERT_TRUE(store_->Watch(WatchScope::Sessions(), version, [&] { ++woken; }));
  const uint64_t epoch = store_->epoch();
  store_->ResetIndex(1);
  EXPECT_EQ(woken.load(), 2);
  EXPECT_EQ(store_->epoch(), epoch + 1);
}

TEST_F(StoreKvTest, TombstonesAreReapedAfterTheirTtlAndThePrefixIndexFallsBack) {
  Set(*store_, "p/a", "1");
  Set(*store_, "p/b", "1");
  const uint64_t a_index = store_->Get("p/a").entry->modify_index;
  ASSERT_TRUE(MustApply(*store_, Op(KvVerb::kDelete, "p/b")));
  EXPECT_GT(store_->List("p/").index, a_index);
  clock_.Advance(absl::Minutes(15));
  store_->Tick();
  EXPECT_EQ(store_->List("p/").index, a_index);  // as in Consul, the index went backwards
}

TEST_F(StoreKvTest, EmptyKeyIsRefusedExceptForDeleteTree) {
  absl::StatusOr<bool> result = store_->Apply(Op(KvVerb::kSet, "", "v"));
  EXPECT_EQ(result.status().message(), "Must provide key");
  Set(*store_, "a", "1");
  EXPECT_TRUE(MustApply(*store_, Op(KvVerb::kDeleteTree, "")));
  EXPECT_TRUE(store_->List("").entries.empty());
}

}  // namespace
}  // namespace registry::devserver

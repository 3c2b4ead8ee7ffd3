// SPDX-License-Identifier: Apache-2.0
// Live KV reads, writes and deletes through registry::consul::Client against the dev server.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "integration/consul_client/live_fixture.h"

namespace registry::consul::live {
namespace {

using KvLiveTest = LiveClientTest;
// Tests that need the dev server's fault injection, request counts or a second server.
class KvLiveFaultsTest : public registry::testing::DevServerOnly<LiveClientTest> {};

std::vector<std::string> KeysOf(const std::vector<DirEntry>& entries) {
  std::vector<std::string> keys;
  for (const DirEntry& entry : entries) keys.push_back(entry.key);
  return keys;
}

TEST_F(KvLiveTest, GetReturnsTheStoredEntryWithItsIndexesAndMeta) {
  ASSERT_OK_AND_ASSIGN(bool put, client().KvPut("app/config", "v1", {.flags = 7}));
  ASSERT_TRUE(put);
  ASSERT_OK_AND_ASSIGN(KvGetResult get, client().KvGet("app/config"));
  ASSERT_TRUE(get.entry.has_value());
  EXPECT_EQ(get.entry->key, "app/config");
  EXPECT_EQ(get.entry->value, "v1");
  EXPECT_EQ(get.entry->flags, 7u);
  EXPECT_EQ(get.entry->session, "");
  EXPECT_EQ(get.entry->lock_index, 0u);
  EXPECT_GE(get.entry->create_index, 1u);
  EXPECT_EQ(get.entry->modify_index, get.entry->create_index);
  EXPECT_EQ(get.meta.index, get.entry->modify_index);
  EXPECT_TRUE(get.meta.known_leader);
}

TEST_F(KvLiveTest, GetRawReturnsTheBareValueBytes) {
  const std::string binary("a\0b\xff\n", 5);
  ASSERT_GT(Put("app/blob", binary), 0u);
  ASSERT_OK_AND_ASSIGN(KvGetRawResult raw, client().KvGetRaw("app/blob"));
  ASSERT_TRUE(raw.value.has_value());
  EXPECT_EQ(*raw.value, binary);
  EXPECT_GE(raw.meta.index, 1u);
}

TEST_F(KvLiveTest, AbsentKeyIsAbsentNotAnErrorAndCarriesTheTableIndex) {
  const uint64_t written = Put("other/key", "x");
  ASSERT_GT(written, 0u);
  ASSERT_OK_AND_ASSIGN(KvGetResult get, client().KvGet("missing/key"));
  EXPECT_FALSE(get.entry.has_value());
  EXPECT_EQ(get.meta.index, written);
  ASSERT_OK_AND_ASSIGN(KvGetRawResult raw, client().KvGetRaw("missing/key"));
  EXPECT_FALSE(raw.value.has_value());
  EXPECT_EQ(raw.meta.index, written);
}

TEST_F(KvLiveTest, AbsentKeyOnAnEmptyServerStillReportsIndexOne) {
  if (!fresh_server()) GTEST_SKIP() << "an external agent's KV index has a history";
  ASSERT_OK_AND_ASSIGN(KvGetResult get, client().KvGet("nothing"));
  EXPECT_FALSE(get.entry.has_value());
  EXPECT_EQ(get.meta.index, 1u);
}

TEST_F(KvLiveTest, EmptyValueReadsBackAsPresentAndEmpty) {
  ASSERT_GT(Put("app/empty", ""), 0u);
  ASSERT_OK_AND_ASSIGN(KvGetResult get, client().KvGet("app/empty"));
  ASSERT_TRUE(get.entry.has_value());
  EXPECT_EQ(get.entry->value, "");
  ASSERT_OK_AND_ASSIGN(KvGetRawResult raw, client().KvGetRaw("app/empty"));
  ASSERT_TRUE(raw.value.has_value());
  EXPECT_EQ(*raw.value, "");
}

TEST_F(KvLiveTest, KeysWithSeparatorCutAfterTheFirstSeparatorBelowThePrefix) {
  for (const char* key : {"svc/a", "svc/b/1", "svc/b/2", "svc/c/d/e", "svcx"}) {
    ASSERT_GT(Put(key, "v"), 0u);
  }
  ASSERT_OK_AND_ASSIGN(KvKeysResult keys, client().KvKeys("svc/", "/"));
  EXPECT_EQ(keys.keys, (std::vector<std::string>{"svc/a", "svc/b/", "svc/c/"}));
  EXPECT_GE(keys.meta.index, 1u);
}

TEST_F(KvLiveTest, KeysWithoutSeparatorListEveryKeyWithThePrefix) {
  for (const char* key : {"svc/a", "svc/b/1", "svcx", "zzz"}) ASSERT_GT(Put(key, "v"), 0u);
  ASSERT_OK_AND_ASSIGN(KvKeysResult keys, client().KvKeys("svc"));
  EXPECT_EQ(keys.keys, (std::vector<std::string>{"svc/a", "svc/b/1", "svcx"}));
}

TEST_F(KvLiveTest, KeysUnderAnUnusedPrefixAreAnEmptyList) {
  ASSERT_GT(Put("a/b", "v"), 0u);
  ASSERT_OK_AND_ASSIGN(KvKeysResult keys, client().KvKeys("nothing/here/", "/"));
  EXPECT_TRUE(keys.keys.empty());
  EXPECT_GE(keys.meta.index, 1u);
}

TEST_F(KvLiveTest, RecurseListsEveryEntryUnderThePrefixInKeyOrder) {
  ASSERT_GT(Put("tree/b", "2"), 0u);
  ASSERT_GT(Put("tree/a/deep", "1"), 0u);
  ASSERT_GT(Put("tree/c", "3"), 0u);
  const uint64_t last = Put("treeless", "0");
  ASSERT_GT(last, 0u);
  ASSERT_OK_AND_ASSIGN(KvListResult list, client().KvList("tree/"));
  EXPECT_EQ(KeysOf(list.entries), (std::vector<std::string>{"tree/a/deep", "tree/b", "tree/c"}));
  ASSERT_EQ(list.entries.size(), 3u);
  EXPECT_EQ(list.entries[0].value, "1");
  EXPECT_EQ(list.entries[2].value, "3");
  EXPECT_LT(list.meta.index, last);  // the prefix's own index, not the table's
}

TEST_F(KvLiveTest, RecurseOverAnUnusedPrefixIsAnEmptyList) {
  ASSERT_OK_AND_ASSIGN(KvListResult list, client().KvList("nothing/"));
  EXPECT_TRUE(list.entries.empty());
}

TEST_F(KvLiveTest, EveryPutWritesItsFlagsAndAPutWithoutFlagsResetsThemToZero) {
  ASSERT_OK_AND_ASSIGN(bool first, client().KvPut("f", "v", {.flags = 42}));
  ASSERT_TRUE(first);
  ASSERT_EQ(Lookup("f")->flags, 42u);
  ASSERT_OK_AND_ASSIGN(bool second, client().KvPut("f", "v2"));
  ASSERT_TRUE(second);
  EXPECT_EQ(Lookup("f")->flags, 0u);
}

TEST_F(KvLiveTest, CasWithTheCurrentModifyIndexApplies) {
  const uint64_t index = Put("cas", "old");
  ASSERT_GT(index, 0u);
  ASSERT_OK_AND_ASSIGN(bool applied, client().KvPut("cas", "new", {.cas = index}));
  EXPECT_TRUE(applied);
  EXPECT_EQ(Lookup("cas")->value, "new");
}

TEST_F(KvLiveTest, CasWithAStaleModifyIndexIsRefusedAndChangesNothing) {
  const uint64_t stale = Put("cas", "old");
  const uint64_t current = Put("cas", "current");
  ASSERT_GT(current, stale);
  ASSERT_OK_AND_ASSIGN(bool applied, client().KvPut("cas", "new", {.cas = stale}));
  EXPECT_FALSE(applied);
  EXPECT_EQ(Lookup("cas")->value, "current");
  EXPECT_EQ(Lookup("cas")->modify_index, current);
}

TEST_F(KvLiveTest, CasZeroCreatesOnlyWhenTheKeyIsAbsent) {
  ASSERT_OK_AND_ASSIGN(bool created, client().KvPut("once", "first", {.cas = 0}));
  EXPECT_TRUE(created);
  ASSERT_OK_AND_ASSIGN(bool again, client().KvPut("once", "second", {.cas = 0}));
  EXPECT_FALSE(again);
  EXPECT_EQ(Lookup("once")->value, "first");
}

TEST_F(KvLiveFaultsTest, ValueOfExactlyTheLimitIsStoredAndOneByteMoreIsRefusedWithoutARequest) {
  const std::string at_limit(kMaxValueBytes, 'x');
  ASSERT_OK_AND_ASSIGN(bool put, client().KvPut("big", at_limit));
  ASSERT_TRUE(put);
  EXPECT_EQ(Lookup("big")->value.size(), kMaxValueBytes);
  const uint64_t puts = RequestCount(server(), "kv.put");
  absl::StatusOr<bool> over = client().KvPut("big", at_limit + "y");
  EXPECT_EQ(over.status().code(), absl::StatusCode::kInvalidArgument) << over.status();
  EXPECT_EQ(RequestCount(server(), "kv.put"), puts);
}

TEST_F(KvLiveTest, KeysWithSpacesPercentSignsAndUtf8RoundTrip) {
  const std::string key = "odd/a b%20c?d#e&f=g+h/\xc3\xa9t\xc3\xa9";
  ASSERT_GT(Put(key, "v"), 0u);
  ASSERT_OK_AND_ASSIGN(KvKeysResult keys, client().KvKeys("odd/"));
  EXPECT_EQ(keys.keys, std::vector<std::string>{key});
  EXPECT_EQ(Lookup(key)->key, key);
  ASSERT_OK_AND_ASSIGN(bool deleted, client().KvDelete(key));
  EXPECT_TRUE(deleted);
  EXPECT_FALSE(Lookup(key).has_value());
}

TEST_F(KvLiveTest, DeleteRemovesOnlyTheNamedKey) {
  ASSERT_GT(Put("dir/a", "1"), 0u);
  ASSERT_GT(Put("dir/a/child", "2"), 0u);
  ASSERT_OK_AND_ASSIGN(bool deleted, client().KvDelete("dir/a"));
  EXPECT_TRUE(deleted);
  EXPECT_FALSE(Lookup("dir/a").has_value());
  EXPECT_TRUE(Lookup("dir/a/child").has_value());
}

TEST_F(KvLiveTest, RecursiveDeleteOfAFolderKeepsTheKeysOfASiblingSharingItsName) {
  for (const char* key : {"dir/", "dir/a", "dir/b/c", "dirx", "dirx/y"})
    ASSERT_GT(Put(key, "v"), 0u);
  ASSERT_OK_AND_ASSIGN(bool deleted, client().KvDelete("dir/", {.recurse = true}));
  EXPECT_TRUE(deleted);
  ASSERT_OK_AND_ASSIGN(KvKeysResult keys, client().KvKeys(""));
  EXPECT_EQ(keys.keys, (std::vector<std::string>{"dirx", "dirx/y"}));
}

TEST_F(KvLiveTest, RecursiveDeleteWithoutTrailingSlashIsAPlainStringPrefix) {
  for (const char* key : {"dir/a", "dirx", "other"}) ASSERT_GT(Put(key, "v"), 0u);
  ASSERT_OK_AND_ASSIGN(bool deleted, client().KvDelete("dir", {.recurse = true}));
  EXPECT_TRUE(deleted);
  ASSERT_OK_AND_ASSIGN(KvKeysResult keys, client().KvKeys(""));
  EXPECT_EQ(keys.keys, std::vector<std::string>{"other"});
}

TEST_F(KvLiveTest, DeleteCasWithTheCurrentIndexDeletes) {
  const uint64_t index = Put("dc", "v");
  ASSERT_OK_AND_ASSIGN(bool deleted, client().KvDelete("dc", {.cas = index}));
  EXPECT_TRUE(deleted);
  EXPECT_FALSE(Lookup("dc").has_value());
}

TEST_F(KvLiveTest, DeleteCasWithAStaleIndexKeepsTheKey) {
  const uint64_t index = Put("dc", "v");
  ASSERT_GT(index, 0u);
  ASSERT_OK_AND_ASSIGN(bool deleted, client().KvDelete("dc", {.cas = index + 100}));
  EXPECT_FALSE(deleted);
  EXPECT_TRUE(Lookup("dc").has_value());
}

TEST_F(KvLiveTest, DeleteCasOfAnAbsentKeyReportsSuccess) {
  ASSERT_OK_AND_ASSIGN(bool deleted, client().KvDelete("never/there", {.cas = 5}));
  EXPECT_TRUE(deleted);
}

}  // namespace
}  // namespace registry::consul::live

// SPDX-License-Identifier: Apache-2.0
// tests/lock/lock_name_test.cc
#include "lock/lock_name.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "repository/key_space.h"

namespace registry::lock {
namespace {

using ::testing::HasSubstr;

TEST(LockNameTest, PathsWithOrWithoutLeadingSlashAreTheSameCanonicalName) {
  EXPECT_EQ(*CanonicalLockName("a/b"), "a/b");
  EXPECT_EQ(*CanonicalLockName("/a/b"), "a/b");
  EXPECT_EQ(*CanonicalLockName("/lock/exclusive/locks/db1"), "lock/exclusive/locks/db1");
}

TEST(LockNameTest, MalformedNamesAreRejectedWithTheReason) {
  EXPECT_THAT(ValidateLockName("").message(), HasSubstr("empty"));
  EXPECT_THAT(ValidateLockName("/").message(), HasSubstr("empty"));
  EXPECT_THAT(ValidateLockName("a//b").message(), HasSubstr("segment"));
  EXPECT_THAT(ValidateLockName("a/../b").message(), HasSubstr("'..'"));
  EXPECT_THAT(ValidateLockName("a/").message(), HasSubstr("segment"));
  EXPECT_THAT(ValidateLockName("a\nb").message(), HasSubstr("control character"));
  EXPECT_THAT(ValidateLockName(" a").message(), HasSubstr("space"));
  EXPECT_THAT(ValidateLockName(std::string(kMaxLockNameBytes + 1, 'x')).message(),
              HasSubstr("longer than"));
  EXPECT_TRUE(ValidateLockName(std::string(kMaxLockNameBytes, 'x')).ok());
}

TEST(LockNameTest, LockKeyLivesUnderTheNamespaceAsAFolderKey) {
  const KeySpace space("governance_ds");
  EXPECT_EQ(LockConsulKey(space, "a/b"), "governance_ds/lock/a/b/");
}

TEST(LockNameTest, NoRepositoryKeyMapsToALockKey) {
  const KeySpace space("ns");
  for (const char* name : {"a", "a/b", "lock/x"}) {
    const std::string key = LockConsulKey(space, name);
    EXPECT_EQ(space.RepositoryKey(key), std::nullopt) << key;
  }
  // The repository keys closest to a lock key are different Consul keys.
  EXPECT_NE(space.ConsulKey("/lock/a"), LockConsulKey(space, "a"));
  EXPECT_NE(space.ConsulKey("/lock/a/b"), LockConsulKey(space, "a/b"));
}

TEST(LockNameTest, FairLockKeysLiveInTreesOfTheirOwnApartFromTheMutexOfTheSameName) {
  const KeySpace space("ns");
  EXPECT_EQ(FairLockOwnerKey(space, "a/b"), "ns/fair-lock/a/b/");
  EXPECT_EQ(FairLockQueuePrefix(space, "a/b"), "ns/fair-queue/a/b/");
  EXPECT_NE(LockConsulKey(space, "a/b"), FairLockOwnerKey(space, "a/b"));
  // An entry is a folder key: no repository key maps to it.
  const std::string entry = FairLockQueuePrefix(space, "a") + "session.0123456789abcdef/";
  EXPECT_EQ(space.RepositoryKey(entry), std::nullopt);
  EXPECT_EQ(space.RepositoryKey(FairLockOwnerKey(space, "a")), std::nullopt);
}

}  // namespace
}  // namespace registry::lock

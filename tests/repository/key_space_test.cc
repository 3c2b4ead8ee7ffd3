// SPDX-License-Identifier: Apache-2.0
// tests/repository/key_space_test.cc
#include "repository/key_space.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace registry {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(ValidateKeyTest, AcceptsAbsolutePaths) {
  EXPECT_TRUE(ValidateRepositoryKey("/a").ok());
  EXPECT_TRUE(ValidateRepositoryKey("/metadata/db/tables/t1").ok());
  EXPECT_TRUE(ValidateRepositoryKey("/a b/c").ok());
  EXPECT_TRUE(ValidateRepositoryKey("/.hidden/x..y").ok());
}

TEST(ValidateKeyTest, AcceptsValidUtf8) {
  EXPECT_TRUE(ValidateRepositoryKey("/schemas/\xE8\xA1\xA8/t\xC3\xA9").ok());  // 表, é
  EXPECT_TRUE(ValidateRepositoryKey("/emoji/\xF0\x9F\x99\x82").ok());
}

TEST(ValidateKeyTest, RejectsInvalidUtf8NamingTheKey) {
  for (const char* key : {"/a/\xFF", "/a/\xC3", "/\xC0\xAF", "/\xED\xA0\x80"}) {
    absl::Status status = ValidateRepositoryKey(key);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << key;
    EXPECT_THAT(std::string(status.message()), HasSubstr("not valid UTF-8")) << key;
    EXPECT_THAT(std::string(status.message()), HasSubstr("'/")) << key;
  }
}

TEST(ValidateNamespaceTest, RejectsInvalidUtf8) {
  EXPECT_EQ(ValidateNamespace("ns\xFF").code(), absl::StatusCode::kInvalidArgument);
}

TEST(ValidateKeyTest, RejectsEmptyKey) {
  absl::Status status = ValidateRepositoryKey("");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("''"));
}

TEST(ValidateKeyTest, RejectsRelativeKeyNamingIt) {
  absl::Status status = ValidateRepositoryKey("a/b");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("'a/b'"));
}

TEST(ValidateKeyTest, RejectsEmptySegments) {
  for (const char* key : {"//a", "/a//b", "/a/"}) {
    absl::Status status = ValidateRepositoryKey(key);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << key;
    EXPECT_THAT(status.message(), HasSubstr(key));
  }
}

TEST(ValidateKeyTest, RejectsDotSegments) {
  for (const char* key : {"/.", "/..", "/a/./b", "/a/../b", "/a/.."}) {
    EXPECT_EQ(ValidateRepositoryKey(key).code(), absl::StatusCode::kInvalidArgument) << key;
  }
}

TEST(ValidateKeyTest, RejectsSpacesAtTheEnds) {
  EXPECT_EQ(ValidateRepositoryKey(" /a").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateRepositoryKey("/a ").code(), absl::StatusCode::kInvalidArgument);
}

// Consul answers a URL path holding any of these with a bare 400: a key holding one could be
// written by a transaction (an ephemeral write) and never read back by Get.
TEST(ValidateKeyTest, RejectsCodePointsConsulRefusesInAPathNamingTheFirst) {
  absl::Status status = ValidateRepositoryKey("/loc/-\xde\xb2");  // U+07B2: unassigned
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("U+07B2"));
  EXPECT_THAT(status.message(), HasSubstr("/loc/-\\xde\\xb2"));
  for (const char* key : {"/a\u00a0b", "/a\u00adb", "/a\u200bb", "/a\u2028b", "/a\ue000b",
                          "/a\uffffb", "/a\u3000b"}) {
    EXPECT_EQ(ValidateRepositoryKey(key).code(), absl::StatusCode::kInvalidArgument) << key;
  }
  EXPECT_EQ(ValidateNamespace("ns\u200b").code(), absl::StatusCode::kInvalidArgument);
  for (const char* key : {"/caf\u00e9", "/\u4e2d\u6587", "/\U0001F600", "/a b", "/a~!@#$%^&*()"}) {
    EXPECT_TRUE(ValidateRepositoryKey(key).ok()) << key;
  }
}

TEST(ValidateKeyTest, RejectsControlCharactersShowingThemEscaped) {
  absl::Status status = ValidateRepositoryKey(std::string("/a\nb"));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("/a\\nb"));
  EXPECT_EQ(ValidateRepositoryKey(std::string("/a\0b", 4)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ValidateRepositoryKey("/a\x7f").code(), absl::StatusCode::kInvalidArgument);
}

TEST(ValidateKeyTest, AcceptsRootOnlyWhereAllowed) {
  EXPECT_EQ(ValidateRepositoryKey("/").code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(ValidateRepositoryKey("/", RootKey::kAllowed).ok());
}

TEST(ValidateNamespaceTest, AcceptsPlainAndNestedNames) {
  EXPECT_TRUE(ValidateNamespace("governance_ds").ok());
  EXPECT_TRUE(ValidateNamespace("org/governance").ok());
}

TEST(ValidateNamespaceTest, RejectsMalformedNames) {
  for (const char* name : {"", "/ns", "ns/", "a//b", ".", "..", "a/../b", " ns", "ns ", "n\ts"}) {
    absl::Status status = ValidateNamespace(name);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_THAT(status.message(), HasSubstr("namespace")) << name;
  }
}

TEST(KeySpaceTest, CreateRejectsAnInvalidNamespace) {
  EXPECT_EQ(KeySpace::Create("ns/").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(KeySpace::Create("ns").ok());
}

TEST(KeySpaceTest, MapsKeysUnderTheNamespace) {
  KeySpace space("ns");
  EXPECT_EQ(space.ConsulKey("/a/b"), "ns/a/b");
  EXPECT_EQ(space.ConsulKey("/a"), "ns/a");
}

TEST(KeySpaceTest, TreePrefixEndsWithSeparatorSoSiblingsWithCommonPrefixStayOut) {
  KeySpace space("ns");
  EXPECT_EQ(space.TreePrefix("/a"), "ns/a/");
  EXPECT_EQ(space.TreePrefix("/"), "ns/");
  EXPECT_FALSE(space.ConsulKey("/ab").starts_with(space.TreePrefix("/a")));
}

TEST(KeySpaceTest, NamespaceRootPrefixExcludesNamespacesWithCommonPrefix) {
  KeySpace ns("ns");
  KeySpace ns2("ns2");
  EXPECT_FALSE(ns2.ConsulKey("/a").starts_with(ns.TreePrefix("/")));
}

TEST(KeySpaceTest, MapsConsulKeysBackOnlyInsideTheNamespace) {
  KeySpace space("ns");
  EXPECT_EQ(space.RepositoryKey("ns/a/b"), "/a/b");
  EXPECT_EQ(space.RepositoryKey("ns2/a"), std::nullopt);
  EXPECT_EQ(space.RepositoryKey("ns"), std::nullopt);
  EXPECT_EQ(space.RepositoryKey("ns/"), std::nullopt);
  EXPECT_EQ(space.RepositoryKey("ns/a//b"), std::nullopt);
  EXPECT_EQ(space.RepositoryKey("other/ns/a"), std::nullopt);
}

TEST(ChildNamesTest, KeepsDirectChildNamesSortedAndDeduplicated) {
  std::vector<std::string> listed = {"ns/a/c/", "ns/a/b", "ns/a/c/", "ns/a/a"};
  EXPECT_THAT(ChildNames("ns/a/", listed), ElementsAre("a", "b", "c"));
}

TEST(ChildNamesTest, CutsDeeperKeysAtTheirFirstSegment) {
  EXPECT_THAT(ChildNames("ns/a/", {"ns/a/c/d/e", "ns/a/b"}), ElementsAre("b", "c"));
}

TEST(ChildNamesTest, DropsThePrefixItselfEmptyNamesAndForeignKeys) {
  EXPECT_THAT(ChildNames("ns/a/", {"ns/a/", "ns/a//x", "ns/ab", "ns2/a/x", "ns/a/./y"}), IsEmpty());
}

TEST(ChildNamesTest, ReturnsNothingForAnEmptyListing) {
  EXPECT_THAT(ChildNames("ns/", {}), IsEmpty());
}

}  // namespace
}  // namespace registry

// SPDX-License-Identifier: Apache-2.0
#include "consul/server_list.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace registry::consul {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(ServerListTest, ParsesBareAndSchemedEntriesInOrder) {
  absl::StatusOr<std::vector<ServerAddress>> servers =
      ParseServerList(" 127.0.0.1:8500, http://consul-a:8500 ,HTTPS://consul.b.example:8501/");
  ASSERT_TRUE(servers.ok()) << servers.status();
  ASSERT_EQ(servers->size(), 3u);
  EXPECT_EQ((*servers)[0].base_url, "http://127.0.0.1:8500");
  EXPECT_FALSE((*servers)[0].https);
  EXPECT_EQ((*servers)[1].host, "consul-a");
  EXPECT_EQ((*servers)[2].base_url, "https://consul.b.example:8501");
  EXPECT_TRUE((*servers)[2].https);
  EXPECT_EQ((*servers)[2].port, 8501);
}

TEST(ServerListTest, AcceptsBracketedIpv6) {
  absl::StatusOr<std::vector<ServerAddress>> servers = ParseServerList("[::1]:8500");
  ASSERT_TRUE(servers.ok()) << servers.status();
  EXPECT_EQ((*servers)[0].host, "::1");
  EXPECT_EQ((*servers)[0].base_url, "http://[::1]:8500");
}

TEST(ServerListTest, DropsDuplicates) {
  absl::StatusOr<std::vector<ServerAddress>> servers = ParseServerList("h:1,http://h:1");
  ASSERT_TRUE(servers.ok());
  EXPECT_EQ(servers->size(), 1u);
}

TEST(ServerListTest, RejectsEmptyList) {
  EXPECT_TRUE(absl::IsInvalidArgument(ParseServerList("  ").status()));
}

TEST(ServerListTest, BadEntriesAreNamedWithTheirPosition) {
  struct Case {
    const char* text;
    const char* expected;
  };
  for (const Case& c : {Case{"h:1,,h:2", "entry 2"}, Case{"h:1,nohost", "entry 2 'nohost'"},
                        Case{"ftp://h:1", "scheme"}, Case{"h:0", "port"}, Case{"h:65536", "port"},
                        Case{"h:8500x", "port"}, Case{":8500", "host"}, Case{"h:1/v1", "path"},
                        Case{"[::1]8500", "port"}, Case{"bad host:1", "host"}}) {
    absl::Status status = ParseServerList(c.text).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << c.text;
    EXPECT_THAT(status.message(), HasSubstr(c.expected)) << c.text;
  }
}

TEST(ServerListTest, CredentialsAreRejectedWithoutEchoingThem) {
  absl::Status status = ParseServerList("http://user:s3cret@h:8500").status();
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(status.message(), Not(HasSubstr("s3cret")));
}

}  // namespace
}  // namespace registry::consul

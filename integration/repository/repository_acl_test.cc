// SPDX-License-Identifier: Apache-2.0
// integration/repository/repository_acl_test.cc
//
// A repository whose token the server refuses (none, or one it does not know) against a server
// with default-deny ACLs: every call fails at once with PERMISSION_DENIED naming what it did and
// the key, never a hang, a retry loop or a wrong answer. Needs a server with ACLs: the consul-acl
// entries run it; elsewhere it is skipped, saying so.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/repository/repository_fixture.h"

namespace registry::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

class RepositoryAclTest : public RepositoryTest, public ::testing::WithParamInterface<const char*> {
 protected:
  void SetUp() override {
    RepositoryTest::SetUp();
    if (HasFatalFailure()) return;
    if (token().empty()) GTEST_SKIP() << "needs a server with ACLs on (the consul-acl entries)";
    // Something to read: a key written with every right.
    ASSERT_TRUE(raw().KvPut("ns/acl/k", "v").ok());
  }

  // A repository of namespace "ns" presenting the test's parameter as its token.
  std::unique_ptr<Repository> RefusedRepository() {
    ConsulRepositoryOptions options = Options();
    options.client.token = GetParam();
    return NewRepository(options);
  }
};

// The refusal, and the key it was about, are in the message.
void ExpectDenied(const absl::Status& status, const std::string& key) {
  EXPECT_EQ(status.code(), absl::StatusCode::kPermissionDenied) << status;
  EXPECT_THAT(status.message(), HasSubstr(key)) << status;
}

TEST_P(RepositoryAclTest, WritesAreDeniedNamingTheKey) {
  std::unique_ptr<Repository> repository = RefusedRepository();
  ASSERT_NE(repository, nullptr);
  ExpectDenied(repository->Persist("/acl/k", "w"), "/acl/k");
  ExpectDenied(repository->Update("/acl/k", "w"), "/acl/k");
  ExpectDenied(repository->Delete("/acl/k"), "/acl/k");
  EXPECT_EQ(raw().KvGetRaw("ns/acl/k")->value, std::optional<std::string>("v"))
      << "a refused write changed the key";
}

TEST_P(RepositoryAclTest, ReadsAreDeniedNamingTheKeyNotReportedAbsent) {
  std::unique_ptr<Repository> repository = RefusedRepository();
  ASSERT_NE(repository, nullptr);
  ExpectDenied(repository->Get("/acl/k").status(), "/acl/k");
  ExpectDenied(repository->IsExisted("/acl/k").status(), "/acl/k");
}

TEST_P(RepositoryAclTest, SessionWorkIsDeniedNamingTheKey) {
  std::unique_ptr<Repository> repository = RefusedRepository();
  ASSERT_NE(repository, nullptr);
  const absl::Status ephemeral = repository->PersistEphemeral("/acl/e", "v");
  ExpectDenied(ephemeral, "/acl/e");
  EXPECT_THAT(ephemeral.message(), HasSubstr("session"));
  EXPECT_TRUE(repository->Close().ok());
}

// An unknown token's first listing is refused, so Watch fails at once instead of retrying in the
// background. Without a token Consul filters list reads instead of refusing them, and 1.8.7 does
// not say that it did (1.12 and later send X-Consul-Results-Filtered-By-ACLs): the watch starts
// on what the anonymous token may read, which under default deny is nothing.
TEST_P(RepositoryAclTest, WatchIsDeniedOrSeesOnlyWhatTheTokenMayRead) {
  std::unique_ptr<Repository> repository = RefusedRepository();
  ASSERT_NE(repository, nullptr);
  const absl::Status watch = repository->Watch("/acl", [](const DataChangedEvent&) {}).status();
  if (*GetParam() != '\0') {
    ExpectDenied(watch, "/acl");
    return;
  }
  EXPECT_TRUE(watch.ok()) << watch;
  absl::StatusOr<std::vector<std::string>> children = repository->GetChildrenKeys("/acl");
  ASSERT_TRUE(children.ok()) << children.status();
  EXPECT_THAT(*children, IsEmpty()) << "the anonymous token read a key";
}

INSTANTIATE_TEST_SUITE_P(NoTokenOrAnUnknownOne, RepositoryAclTest,
                         ::testing::Values("", "00000000-0000-4000-8000-000000000000"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                           return std::string(*info.param == '\0' ? "NoToken" : "UnknownToken");
                         });

}  // namespace
}  // namespace registry::testing

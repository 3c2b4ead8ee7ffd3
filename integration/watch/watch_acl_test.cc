// SPDX-License-Identifier: Apache-2.0
// integration/watch/watch_acl_test.cc
//
// Watches against a server that requires an ACL token on every request (the dev server with a
// master token; Consul with default-deny ACLs refuses token-less reads the same way): every
// blocking re-poll must carry the token, not only the first listing and the first poll.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "devserver/dev_server.h"
#include "gtest/gtest.h"
#include "instance/instance.h"
#include "integration/testing/server_test.h"
#include "registry/repository.h"

namespace registry::testing {
namespace {

constexpr char kToken[] = "3f0c4b8e-watch-acl-token";

TEST(WatchAclTest, EveryBlockingRePollCarriesTheTokenSoEveryChangeArrives) {
  devserver::ServerOptions server_options;
  server_options.session_ttl_min = absl::Seconds(1);
  server_options.acl_master_token = kToken;
  absl::StatusOr<std::unique_ptr<devserver::DevServer>> server =
      devserver::DevServer::Start(server_options);
  ASSERT_TRUE(server.ok()) << server.status();

  ConsulRepositoryOptions options;
  options.client.servers = (*server)->address();
  options.client.token = kToken;
  options.namespace_name = "acl";
  options.block_query_wait = absl::Seconds(5);
  absl::StatusOr<std::unique_ptr<ConsulRepository>> repository = NewConsulRepository(options);
  ASSERT_TRUE(repository.ok()) << repository.status();

  absl::Mutex mu;
  std::vector<std::string> values;
  ASSERT_TRUE((*repository)
                  ->Watch("/config",
                          [&](const DataChangedEvent& event) {
                            absl::MutexLock lock(&mu);
                            values.push_back(event.value.value_or("<deleted>"));
                          })
                  .ok());
  // Each write wakes the blocking poll in flight; the watch then polls again. Five rounds need
  // five re-polls after the first one, each refused without the token.
  constexpr int kRounds = 5;
  for (int i = 1; i <= kRounds; ++i) {
    const std::string value = absl::StrCat("v", i);
    ASSERT_TRUE((*repository)->Persist("/config/key", value).ok());
    absl::MutexLock lock(&mu);
    auto seen = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
      return !values.empty() && values.back() == value;
    };
    ASSERT_TRUE(mu.AwaitWithTimeout(absl::Condition(&seen), kPatience))
        << "round " << i << ": the watch stopped after " << values.size() << " events";
  }
  // A re-poll without the token is refused (403), and the watch recovers only by re-listing
  // after a back-off: the events come late. None may be refused.
  EXPECT_EQ((*server)->RequestCounts()["acl.denied"], 0u);
  ASSERT_TRUE((*repository)->Close().ok());
}

}  // namespace
}  // namespace registry::testing

// SPDX-License-Identifier: Apache-2.0
// Live ACL, datacenter and failover behaviour of registry::consul::Client: dead servers,
// "No cluster leader" bursts and dropped connections injected by the dev server.
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "consul/errors.h"
#include "gtest/gtest.h"
#include "integration/consul_client/live_fixture.h"
#include "integration/testing/delay_proxy.h"

namespace registry::consul::live {
namespace {

constexpr char kToken[] = "3f1c9e0a-acl-master-token";

// Dev server only: a second, ACL-enabled dev server of its own (the consul-acl runs of the
// repository suites cover a real agent).
class AclLiveTest : public registry::testing::DevServerOnly<LiveClientTest> {
 protected:
  void SetUp() override {
    DevServerOnly::SetUp();
    if (HasFatalFailure() || IsSkipped()) return;
    devserver::ServerOptions options = TestServerOptions();
    options.acl_master_token = kToken;
    secured_ = StartServer(options);
    ASSERT_NE(secured_, nullptr);
  }

  std::unique_ptr<Client> ClientWithToken(const std::string& token) {
    ClientOptions options;
    options.servers = secured_->address();
    options.token = token;
    return NewClient(options);
  }

  std::unique_ptr<devserver::DevServer> secured_;
};

TEST_F(AclLiveTest, RequestWithoutTokenIsPermissionDenied) {
  std::unique_ptr<Client> anonymous = ClientWithToken("");
  absl::StatusOr<bool> put = anonymous->KvPut("secret", "v");
  EXPECT_EQ(put.status().code(), absl::StatusCode::kPermissionDenied) << put.status();
  EXPECT_EQ(HttpStatusOf(put.status()), 403);
  absl::StatusOr<KvGetResult> get = anonymous->KvGet("secret");
  EXPECT_EQ(get.status().code(), absl::StatusCode::kPermissionDenied) << get.status();
}

TEST_F(AclLiveTest, RequestWithTheTokenIsAccepted) {
  std::unique_ptr<Client> trusted = ClientWithToken(kToken);
  ASSERT_OK_AND_ASSIGN(bool put, trusted->KvPut("secret", "v"));
  EXPECT_TRUE(put);
  ASSERT_OK_AND_ASSIGN(KvGetResult get, trusted->KvGet("secret"));
  ASSERT_TRUE(get.entry.has_value());
  EXPECT_EQ(get.entry->value, "v");
  ASSERT_OK_AND_ASSIGN(std::string session, trusted->CreateSession(PlainSession("s")));
  EXPECT_FALSE(session.empty());
}

TEST_F(AclLiveTest, WrongTokenIsPermissionDeniedAndNeverEchoed) {
  const std::string wrong = "wrong-token-8d2b";
  std::unique_ptr<Client> intruder = ClientWithToken(wrong);
  absl::StatusOr<bool> put = intruder->KvPut("secret", "v");
  EXPECT_EQ(put.status().code(), absl::StatusCode::kPermissionDenied) << put.status();
  EXPECT_FALSE(absl::StrContains(put.status().ToString(), wrong));
}

using FailoverLiveTest = LiveClientTest;
// Tests that need the dev server's fault injection, request counts or a second server.
class FailoverLiveFaultsTest : public registry::testing::DevServerOnly<LiveClientTest> {};

TEST_F(FailoverLiveFaultsTest, DeadFirstServerIsSkippedAndTheLiveOneAnswers) {
  const int dead = ClosedPort();
  ASSERT_GT(dead, 0);
  ClientOptions options;
  options.servers = absl::StrCat("127.0.0.1:", dead, ",", server().address());
  options.connect_timeout = absl::Seconds(2);
  std::unique_ptr<Client> failover = NewClient(options);
  ASSERT_OK_AND_ASSIGN(bool put, failover->KvPut("k", "v"));
  EXPECT_TRUE(put);
  EXPECT_EQ(Lookup("k")->value, "v");
  EXPECT_EQ(failover->PreferredServer(), BaseUrl(server()));
  ASSERT_OK_AND_ASSIGN(KvGetResult get, failover->KvGet("k"));  // straight to the live one
  EXPECT_EQ(get.entry->value, "v");
}

TEST_F(FailoverLiveFaultsTest, OnlyDeadServersSurfaceUnavailableOnceTheRequestTimeoutHasPassed) {
  ClientOptions options;
  options.servers = absl::StrCat("127.0.0.1:", ClosedPort(), ",127.0.0.1:", ClosedPort());
  options.request_timeout = absl::Milliseconds(300);  // the time the client keeps retrying
  std::unique_ptr<Client> dead = NewClient(options);
  absl::StatusOr<KvGetResult> get = dead->KvGet("k");
  EXPECT_EQ(get.status().code(), absl::StatusCode::kUnavailable) << get.status();
}

TEST_F(FailoverLiveFaultsTest, NoClusterLeaderOnTheFirstServerFailsOverToTheSecond) {
  std::unique_ptr<devserver::DevServer> second = StartServer(TestServerOptions());
  ASSERT_NE(second, nullptr);
  ClientOptions options;
  options.servers = absl::StrCat(server().address(), ",", second->address());
  std::unique_ptr<Client> failover = NewClient(options);
  server().FailNextRequests(1);
  ASSERT_OK_AND_ASSIGN(bool put, failover->KvPut("k", "v"));
  EXPECT_TRUE(put);
  EXPECT_FALSE(Lookup("k").has_value());  // the first server refused it
  EXPECT_EQ(failover->PreferredServer(), BaseUrl(*second));
  EXPECT_EQ(RequestCount(*second, "kv.put"), 1u);
}

// A server that holds requests (a follower waiting for a leader it cannot reach) must not take a
// call's whole time while another server answers: it gets its share, then the next one is asked.
TEST_F(FailoverLiveFaultsTest, AServerThatHoldsRequestsGetsItsShareOfTheTimeoutThenTheNextAnswers) {
  absl::StatusOr<std::unique_ptr<integration::DelayProxy>> stalled = integration::DelayProxy::Start(
      std::stoi(server().address().substr(server().address().rfind(':') + 1)));
  ASSERT_TRUE(stalled.ok()) << stalled.status();
  (*stalled)->set_delay(absl::Seconds(30));  // every request is held
  ClientOptions options;
  options.servers = absl::StrCat((*stalled)->address(), ",", server().address());
  options.request_timeout = absl::Seconds(3);
  std::unique_ptr<Client> failover = NewClient(options);
  ASSERT_GT(Put("held", "v"), 0u);
  const absl::Time start = absl::Now();
  ASSERT_OK_AND_ASSIGN(KvGetResult get, failover->KvGet("held"));  // a read: replay-safe
  EXPECT_LT(absl::Now() - start, absl::Seconds(3)) << "the held request took the whole timeout";
  ASSERT_TRUE(get.entry.has_value());
  EXPECT_EQ(get.entry->value, "v");
  EXPECT_EQ(failover->PreferredServer(), BaseUrl(server()));
}

TEST_F(FailoverLiveFaultsTest, ANoClusterLeaderBurstWithinTheRequestTimeoutIsRiddenThrough) {
  const uint64_t puts = RequestCount(server(), "kv.put");
  server().FailNextRequests(3);
  ASSERT_OK_AND_ASSIGN(bool created, client().KvPut("k", "v", {.cas = 0}));
  EXPECT_TRUE(created);
  EXPECT_EQ(RequestCount(server(), "kv.put"), puts + 4) << "three refused, then applied once";
  EXPECT_EQ(Lookup("k")->value, "v");
}

TEST_F(FailoverLiveFaultsTest, NoClusterLeaderForLongerThanTheRequestTimeoutIsUnavailable) {
  ClientOptions options;
  options.servers = server().address();
  options.request_timeout = absl::Milliseconds(300);
  std::unique_ptr<Client> impatient = NewClient(options);
  server().FailNextRequests(1000);
  absl::StatusOr<KvGetResult> get = impatient->KvGet("k");
  EXPECT_EQ(get.status().code(), absl::StatusCode::kUnavailable) << get.status();
  EXPECT_EQ(HttpStatusOf(get.status()), 500);
  EXPECT_TRUE(absl::StrContains(get.status().message(), "No cluster leader"));
  EXPECT_GE(RequestCount(server(), "kv.get"), 2u) << "retried before giving up";
}

TEST_F(FailoverLiveFaultsTest,
       DroppedConnectionFailsABlockedReadOnAFreshConnectionWithUnavailable) {
  const uint64_t index = Put("quiet", "v");
  ClientOptions options;
  options.servers = server().address();
  std::unique_ptr<Client> fresh = NewClient(options);  // no connection to reuse yet
  const uint64_t gets = RequestCount(server(), "kv.get");
  AsyncCall<absl::StatusOr<KvGetResult>> read([&fresh, index](Canceller* canceller) {
    return fresh->KvGet("quiet", {.index = index, .wait = absl::Seconds(60)}, canceller);
  });
  ASSERT_TRUE(AwaitRequestCount(server(), "kv.get", gets + 1));
  server().DropAllConnections();
  ASSERT_TRUE(read.Done(absl::Seconds(2))) << "still blocked after the connection dropped";
  absl::StatusOr<KvGetResult> result = read.Get();
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable) << result.status();
  ASSERT_OK(fresh->KvPut("quiet", "after").status());  // a new connection works
}

TEST_F(FailoverLiveFaultsTest, DroppedReusedConnectionNeverLeavesABlockedReadStuck) {
  const uint64_t index = Put("quiet", "v");  // leaves a keep-alive connection to reuse
  const uint64_t gets = RequestCount(server(), "kv.get");
  AsyncCall<absl::StatusOr<KvGetResult>> read([this, index](Canceller* canceller) {
    return client().KvGet("quiet", {.index = index, .wait = absl::Seconds(60)}, canceller);
  });
  ASSERT_TRUE(AwaitRequestCount(server(), "kv.get", gets + 1));
  server().DropAllConnections();
  // libcurl may resend a request whose reused connection died before any reply; then the resent
  // read blocks again and must still see the next write.
  ASSERT_OK(client().KvPut("quiet", "after").status());
  ASSERT_TRUE(read.Done(absl::Seconds(2))) << "still blocked after the drop and a write";
  absl::StatusOr<KvGetResult> result = read.Get();
  if (result.ok()) {
    ASSERT_TRUE(result->entry.has_value());
    EXPECT_EQ(result->entry->value, "after");
  } else {
    EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable) << result.status();
  }
}

// The server applies a write and dies before answering. libcurl resends a request whose reused
// keep-alive connection closed without a reply byte, and a resend may undo a write another client
// made in between (a plain write of a shared key), or fail against its own first apply (a
// check-and-set, a transaction). So every write but an acquire or a release goes on a new
// connection, and the loss is reported instead.
TEST_F(FailoverLiveFaultsTest, LostReplyOfAPlainWriteIsUnavailableAndNotResent) {
  ASSERT_GT(Put("warm", "v"), 0u);  // leaves a kept-alive connection for the next request
  const uint64_t puts = RequestCount(server(), "kv.put");
  server().DropNextReplies(1);
  absl::StatusOr<bool> written = client().KvPut("k", "mine");
  ASSERT_FALSE(written.ok()) << "answered a write whose reply was lost";
  EXPECT_EQ(written.status().code(), absl::StatusCode::kUnavailable) << written.status();
  EXPECT_THAT(written.status().message(), ::testing::HasSubstr("not sent again"))
      << "libcurl's resend";
  EXPECT_EQ(RequestCount(server(), "kv.put"), puts + 1) << "sent exactly once";
  ASSERT_OK_AND_ASSIGN(KvGetResult get, client().KvGet("k"));
  ASSERT_TRUE(get.entry.has_value());
  EXPECT_EQ(get.entry->value, "mine");
}

TEST_F(FailoverLiveFaultsTest, LostReplyOfACheckAndSetIsUnavailableNeverAFalseConflict) {
  ASSERT_GT(Put("warm", "v"), 0u);
  const uint64_t puts = RequestCount(server(), "kv.put");
  server().DropNextReplies(1);
  absl::StatusOr<bool> created = client().KvPut("k", "mine", {.cas = 0});
  ASSERT_FALSE(created.ok()) << "answered " << *created << " for a write that was applied";
  EXPECT_EQ(created.status().code(), absl::StatusCode::kUnavailable) << created.status();
  EXPECT_EQ(RequestCount(server(), "kv.put"), puts + 1) << "sent exactly once";
  ASSERT_OK_AND_ASSIGN(KvGetResult get, client().KvGet("k"));
  ASSERT_TRUE(get.entry.has_value());
  EXPECT_EQ(get.entry->value, "mine");
}

TEST_F(FailoverLiveFaultsTest, LostReplyOfATransactionIsUnavailableNeverAFalseConflict) {
  ASSERT_GT(Put("warm", "v"), 0u);
  const uint64_t txns = RequestCount(server(), "txn");
  server().DropNextReplies(1);
  const TxnOp ops[] = {TxnOp::CheckNotExists("k"), TxnOp::Set("k", "mine")};
  absl::StatusOr<TxnResult> result = client().Txn(ops);
  ASSERT_FALSE(result.ok()) << "answered a transaction that was applied";
  EXPECT_EQ(result.status().code(), absl::StatusCode::kUnavailable) << result.status();
  EXPECT_EQ(RequestCount(server(), "txn"), txns + 1) << "sent exactly once";
  ASSERT_OK_AND_ASSIGN(KvGetResult get, client().KvGet("k"));
  ASSERT_TRUE(get.entry.has_value());
  EXPECT_EQ(get.entry->value, "mine");
}

TEST_F(FailoverLiveFaultsTest, DroppedConnectionOnTheFirstServerFailsAReadOverToTheSecond) {
  std::unique_ptr<devserver::DevServer> second = StartServer(TestServerOptions());
  ASSERT_NE(second, nullptr);
  ClientOptions options;
  options.servers = absl::StrCat(server().address(), ",", second->address());
  std::unique_ptr<Client> failover = NewClient(options);
  ASSERT_GT(Put("k", "first"), 0u);
  server().DropNextConnections(1);
  ASSERT_OK_AND_ASSIGN(KvGetResult get, failover->KvGet("k"));
  EXPECT_FALSE(get.entry.has_value());  // answered by the second, empty server
  EXPECT_EQ(failover->PreferredServer(), BaseUrl(*second));
}

TEST_F(FailoverLiveFaultsTest, UnknownDatacenterIsAnErrorNamingTheMissingPath) {
  ClientOptions options;
  options.servers = server().address();
  options.datacenter = "dc-nowhere";
  std::unique_ptr<Client> remote = NewClient(options);
  absl::StatusOr<KvGetResult> get = remote->KvGet("k");
  ASSERT_FALSE(get.ok());
  EXPECT_EQ(HttpStatusOf(get.status()), 500);
  EXPECT_TRUE(absl::StrContains(get.status().message(), "No path to datacenter")) << get.status();
  absl::StatusOr<bool> put = remote->KvPut("k", "v");
  EXPECT_FALSE(put.ok());
  EXPECT_FALSE(Lookup("k").has_value());
}

TEST_F(FailoverLiveFaultsTest, KnownDatacenterIsAccepted) {
  ClientOptions options;
  options.servers = server().address();
  options.datacenter = "dc1";
  std::unique_ptr<Client> local = NewClient(options);
  ASSERT_OK_AND_ASSIGN(bool put, local->KvPut("k", "v"));
  EXPECT_TRUE(put);
}

}  // namespace
}  // namespace registry::consul::live

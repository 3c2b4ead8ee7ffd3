// SPDX-License-Identifier: Apache-2.0
#include "consul/client.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "base/log.h"
#include "consul/errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/consul/mock_transport.h"

namespace registry::consul {
namespace {

using ::registry::consul::testing::MockTransport;
using ::registry::consul::testing::ReadResponse;
using ::registry::consul::testing::Response;
using ::testing::_;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::InSequence;
using ::testing::Not;
using ::testing::Pair;
using ::testing::Return;
using ::testing::SaveArg;

constexpr char kToken[] = "9f1c2d3e-secret-token";

MATCHER_P(ToServer, server, "") { return arg.server == server; }

class ClientTest : public ::testing::Test {
 protected:
  std::unique_ptr<Client> MakeClient(ClientOptions options) {
    absl::StatusOr<std::unique_ptr<Client>> client = Client::Create(std::move(options), transport_);
    EXPECT_TRUE(client.ok()) << client.status();
    return client.ok() ? *std::move(client) : nullptr;
  }

  // Runs one KvGet and returns the request the transport saw.
  HttpRequest CaptureKvGet(Client& client, const QueryOptions& query) {
    HttpRequest seen;
    EXPECT_CALL(*transport_, Execute(_, _))
        .WillOnce(::testing::DoAll(SaveArg<0>(&seen), Return(ReadResponse(404, "", 1))));
    EXPECT_TRUE(client.KvGet("a", query).ok());
    return seen;
  }

  std::shared_ptr<MockTransport> transport_ = std::make_shared<MockTransport>();
};

TEST_F(ClientTest, TokenIsSentAsHeaderAndDatacenterAsParam) {
  auto client = MakeClient({.servers = "h1:8500", .token = kToken, .datacenter = "dc2"});
  HttpRequest seen = CaptureKvGet(*client, {});
  EXPECT_EQ(seen.server, "http://h1:8500");
  EXPECT_EQ(seen.path, "/v1/kv/a");
  ASSERT_NE(seen.FindHeader("x-consul-token"), nullptr);
  EXPECT_EQ(*seen.FindHeader("X-Consul-Token"), kToken);
  EXPECT_THAT(seen.params, ElementsAre(Pair("dc", "dc2")));
}

TEST_F(ClientTest, TheTokenIsRedactedFromTheLogWhileTheClientLives) {
  std::vector<std::string> messages;
  absl::Mutex mu;
  SetLogSink(
      [&](const LogRecord& record) {
        absl::MutexLock lock(&mu);
        messages.push_back(record.message);
      },
      LogLevel::kWarn);
  auto client = MakeClient({.servers = "h1:8500", .token = kToken});
  Log(LogLevel::kWarn, "test", "while alive: ", kToken);
  client.reset();
  Log(LogLevel::kWarn, "test", "after: ", kToken);
  SetLogSink(nullptr, LogLevel::kWarn);  // returns after the last delivery
  absl::MutexLock lock(&mu);
  EXPECT_THAT(messages, ElementsAre("while alive: <redacted>", absl::StrCat("after: ", kToken)));
}

TEST_F(ClientTest, AnonymousClientSendsNoTokenHeader) {
  auto client = MakeClient({.servers = "h1:8500"});
  HttpRequest seen = CaptureKvGet(*client, {});
  EXPECT_EQ(seen.FindHeader("X-Consul-Token"), nullptr);
}

TEST_F(ClientTest, PlainRequestsUseTheRequestTimeout) {
  auto client = MakeClient({.servers = "h1:8500", .request_timeout = absl::Seconds(7)});
  EXPECT_EQ(CaptureKvGet(*client, {}).timeout, absl::Seconds(7));
}

TEST_F(ClientTest, BlockingReadTimeoutIsWaitPlusJitterPlusMargin) {
  auto client = MakeClient({.servers = "h1:8500", .blocking_margin = absl::Seconds(2)});
  HttpRequest seen = CaptureKvGet(*client, {.index = 5, .wait = absl::Seconds(32)});
  EXPECT_EQ(seen.timeout, absl::Seconds(32 + 2 + 2));
  EXPECT_THAT(seen.params, ElementsAre(Pair("index", "5"), Pair("wait", "32000ms")));
}

TEST_F(ClientTest, ConnectionErrorFailsOverToTheNextServer) {
  auto client = MakeClient({.servers = "h1:1,h2:2,h3:3"});
  InSequence order;
  EXPECT_CALL(*transport_, Execute(ToServer("http://h1:1"), _))
      .WillOnce(Return(ConnectionError("refused")));
  EXPECT_CALL(*transport_, Execute(ToServer("http://h2:2"), _))
      .WillOnce(Return(Response(200, "true")));
  EXPECT_EQ(client->KvPut("a", "v").value(), true);
}

TEST_F(ClientTest, NoClusterLeaderFailsOverToTheNextServer) {
  auto client = MakeClient({.servers = "h1:1,h2:2"});
  InSequence order;
  EXPECT_CALL(*transport_, Execute(ToServer("http://h1:1"), _))
      .WillOnce(Return(Response(500, "No cluster leader")));
  EXPECT_CALL(*transport_, Execute(ToServer("http://h2:2"), _))
      .WillOnce(Return(Response(200, "true")));
  EXPECT_TRUE(client->KvPut("a", "v").ok());
}

TEST_F(ClientTest, PermissionDeniedDoesNotFailOver) {
  auto client = MakeClient({.servers = "h1:1,h2:2", .token = kToken});
  EXPECT_CALL(*transport_, Execute(ToServer("http://h1:1"), _))
      .WillOnce(Return(Response(403, "Permission denied")));
  EXPECT_CALL(*transport_, Execute(ToServer("http://h2:2"), _)).Times(0);
  absl::Status status = client->KvPut("a", "v").status();
  EXPECT_TRUE(absl::IsPermissionDenied(status));
  EXPECT_EQ(status.message(), "consul PUT /v1/kv/a: HTTP 403: Permission denied");
}

TEST_F(ClientTest, RoundsOverEveryServerGoOnUntilTheRequestTimeoutThenTheLastErrorIsReturned) {
  auto client =
      MakeClient({.servers = "h1:1,h2:2,h3:3", .request_timeout = absl::Milliseconds(300)});
  std::vector<std::string> servers;
  EXPECT_CALL(*transport_, Execute(_, _))
      .WillRepeatedly([&servers](const HttpRequest& request, Canceller*) {
        servers.push_back(request.server);
        return absl::StatusOr<HttpResponse>(ConnectionError("down"));
      });
  absl::Status status = client->KvPut("a", "v").status();
  EXPECT_TRUE(absl::IsUnavailable(status));
  EXPECT_THAT(status.message(), HasSubstr("all 3 servers failed"));
  // Back-offs start at 50 ms and double: 300 ms leave room for at least two rounds.
  ASSERT_GE(servers.size(), 6u);
  for (size_t i = 0; i < servers.size(); ++i) {
    EXPECT_EQ(servers[i], absl::StrCat("http://h", i % 3 + 1, ":", i % 3 + 1)) << i;
  }
}

TEST_F(ClientTest, AllServersLeaderlessIsUnavailableOnceTheRequestTimeoutHasPassed) {
  auto client = MakeClient({.servers = "h1:1,h2:2", .request_timeout = absl::Milliseconds(200)});
  EXPECT_CALL(*transport_, Execute(_, _))
      .Times(::testing::AtLeast(4))
      .WillRepeatedly(Return(Response(500, "No cluster leader")));
  absl::Status status = client->KvGet("a").status();
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_TRUE(IsConnectionError(status)) << status;  // nothing was applied
}

TEST_F(ClientTest, ACallRidingOutAnElectionReportsTheOutageBeforeItEnds) {
  auto client = MakeClient({.servers = "h1:1,h2:2"});
  std::vector<bool> heard;
  client->AddReachabilityListener([&heard](bool reachable) { heard.push_back(reachable); });
  InSequence order;
  EXPECT_CALL(*transport_, Execute(_, _))
      .Times(2)
      .WillRepeatedly(Return(Response(500, "No cluster leader")));
  EXPECT_CALL(*transport_, Execute(_, _)).WillOnce(Return(ReadResponse(200, "[]", 7)));
  ASSERT_TRUE(client->KvGet("a").ok());
  // Unreachable after the first round over both servers, while the call went on; then the
  // call's own outcome.
  EXPECT_THAT(heard, ElementsAre(false, true));
}

TEST_F(ClientTest, AWriteThatIsNotReplaySafeRidesThroughALeaderElection) {
  auto client = MakeClient({.servers = "h1:1,h2:2"});
  InSequence order;
  // What the followers of a cluster whose leader was killed answer until a new one is elected.
  const HttpResponse unreachable_leader =
      Response(500,
               "rpc error getting client: failed to get conn: dial tcp 10.0.0.1:8300: connect: "
               "connection refused");
  EXPECT_CALL(*transport_, Execute(ToServer("http://h1:1"), _))
      .WillOnce(Return(unreachable_leader));
  EXPECT_CALL(*transport_, Execute(ToServer("http://h2:2"), _))
      .WillOnce(Return(Response(500, "No cluster leader")));
  EXPECT_CALL(*transport_, Execute(ToServer("http://h1:1"), _))
      .WillOnce(Return(unreachable_leader));
  EXPECT_CALL(*transport_, Execute(ToServer("http://h2:2"), _))
      .WillOnce(Return(Response(200, "true")));
  EXPECT_EQ(client->KvPut("a", "v", {.cas = 7}).value(), true);
  EXPECT_EQ(client->PreferredServer(), "http://h2:2");
}

TEST_F(ClientTest, AWriteForwardedToALeaderThatDiedIsAnsweredAsAnUnknownOutcome) {
  auto client = MakeClient({.servers = "h1:1,h2:2"});
  EXPECT_CALL(*transport_, Execute(ToServer("http://h1:1"), _))
      .WillOnce(Return(Response(500, "rpc error making call: stream closed")));
  EXPECT_CALL(*transport_, Execute(ToServer("http://h2:2"), _)).Times(0);
  absl::Status status = client->KvPut("a", "v", {.cas = 7}).status();
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_TRUE(IsUnknownOutcome(status)) << status;  // its caller reads to learn what happened
}

// The server may have applied it, and another client may have written the key since: a resend
// would undo that write (the key going A, B, A from one write of A).
TEST_F(ClientTest, APlainWriteWhoseReplyWasLostIsAnsweredNotSentAgain) {
  auto client = MakeClient({.servers = "h1:1,h2:2"});
  EXPECT_CALL(*transport_, Execute(ToServer("http://h1:1"), _))
      .Times(2)
      .WillRepeatedly(Return(absl::UnavailableError("connection closed before any reply")));
  EXPECT_CALL(*transport_, Execute(ToServer("http://h2:2"), _)).Times(0);
  for (absl::Status status : {client->KvPut("a", "v").status(), client->KvDelete("a").status()}) {
    EXPECT_TRUE(absl::IsUnavailable(status)) << status;
    EXPECT_TRUE(IsUnknownOutcome(status)) << status;
  }
}

TEST_F(ClientTest, AReplaySafeRequestIsSentAgainAfterAForwardWhoseAnswerWasLost) {
  auto client = MakeClient({.servers = "h1:1,h2:2"});
  InSequence order;
  EXPECT_CALL(*transport_, Execute(ToServer("http://h1:1"), _))
      .WillOnce(Return(Response(500, "rpc error making call: EOF")));
  EXPECT_CALL(*transport_, Execute(ToServer("http://h2:2"), _))
      .WillOnce(Return(ReadResponse(404, "", 3)));
  EXPECT_TRUE(client->KvGet("a").ok());
}

TEST_F(ClientTest, CancellingCutsTheBackOffBetweenRoundsShort) {
  auto client = MakeClient({.servers = "h1:1", .request_timeout = absl::Seconds(60)});
  Canceller canceller;
  EXPECT_CALL(*transport_, Execute(_, _)).WillOnce([&canceller](const HttpRequest&, Canceller*) {
    canceller.Cancel();  // as Close() would, from another thread, during the back-off
    return absl::StatusOr<HttpResponse>(ConnectionError("refused"));
  });
  absl::Status status = client->KvGet("a", {}, &canceller).status();
  EXPECT_TRUE(absl::IsCancelled(status)) << status;
}

TEST_F(ClientTest, TheLastGoodServerIsTriedFirstNextTime) {
  auto client = MakeClient({.servers = "h1:1,h2:2"});
  InSequence order;
  EXPECT_CALL(*transport_, Execute(ToServer("http://h1:1"), _))
      .WillOnce(Return(ConnectionError("refused")));
  EXPECT_CALL(*transport_, Execute(ToServer("http://h2:2"), _))
      .Times(2)
      .WillRepeatedly(Return(Response(200, "true")));
  EXPECT_TRUE(client->KvPut("a", "v").ok());
  EXPECT_EQ(client->PreferredServer(), "http://h2:2");
  EXPECT_TRUE(client->KvPut("a", "v").ok());
}

TEST_F(ClientTest, WriteThatTimedOutAfterSendingIsNotRetriedElsewhere) {
  auto client = MakeClient({.servers = "h1:1,h2:2"});
  EXPECT_CALL(*transport_, Execute(ToServer("http://h1:1"), _))
      .WillOnce(Return(absl::UnavailableError("timed out")));
  EXPECT_CALL(*transport_, Execute(ToServer("http://h2:2"), _)).Times(0);
  EXPECT_TRUE(absl::IsUnavailable(client->KvPut("a", "v", {.cas = 4}).status()));
}

TEST_F(ClientTest, ReadThatTimedOutIsRetriedElsewhere) {
  auto client = MakeClient({.servers = "h1:1,h2:2"});
  InSequence order;
  EXPECT_CALL(*transport_, Execute(ToServer("http://h1:1"), _))
      .WillOnce(Return(absl::UnavailableError("timed out")));
  EXPECT_CALL(*transport_, Execute(ToServer("http://h2:2"), _))
      .WillOnce(Return(ReadResponse(404, "", 3)));
  EXPECT_TRUE(client->KvGet("a").ok());
}

TEST_F(ClientTest, CancelledIsReturnedWithoutFailover) {
  auto client = MakeClient({.servers = "h1:1,h2:2"});
  EXPECT_CALL(*transport_, Execute(_, _)).WillOnce(Return(absl::CancelledError("cancelled")));
  EXPECT_TRUE(absl::IsCancelled(client->KvGet("a").status()));
}

TEST_F(ClientTest, CallWithAnAlreadyCancelledCancellerNeverReachesTheTransport) {
  auto client = MakeClient({.servers = "h1:1"});
  Canceller canceller;
  canceller.Cancel();
  EXPECT_CALL(*transport_, Execute(_, _)).Times(0);
  EXPECT_TRUE(absl::IsCancelled(client->KvGet("a", {}, &canceller).status()));
}

TEST_F(ClientTest, TheCancellerIsHandedToTheTransport) {
  auto client = MakeClient({.servers = "h1:1"});
  Canceller canceller;
  EXPECT_CALL(*transport_, Execute(_, &canceller)).WillOnce(Return(ReadResponse(404, "", 1)));
  EXPECT_TRUE(client->KvGet("a", {}, &canceller).ok());
}

TEST_F(ClientTest, ACancellersDeadlineCutsTheRequestTimeout) {
  auto client = MakeClient({.servers = "h1:1", .request_timeout = absl::Seconds(30)});
  Canceller call(nullptr, absl::Now() + absl::Milliseconds(250));
  HttpRequest seen;
  EXPECT_CALL(*transport_, Execute(_, &call))
      .WillOnce(::testing::DoAll(SaveArg<0>(&seen), Return(ReadResponse(404, "", 1))));
  EXPECT_TRUE(client->KvGet("a", {}, &call).ok());
  EXPECT_GT(seen.timeout, absl::ZeroDuration());
  EXPECT_LE(seen.timeout, absl::Milliseconds(251));
}

TEST_F(ClientTest, APassedDeadlineIsDeadlineExceededAndNothingIsSent) {
  auto client = MakeClient({.servers = "h1:1,h2:2"});
  Canceller call(nullptr, absl::Now() - absl::Milliseconds(1));
  EXPECT_CALL(*transport_, Execute(_, _)).Times(0);
  absl::Status status = client->KvPut("a", "v", {}, &call).status();
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  EXPECT_TRUE(IsNotSent(status));
}

TEST_F(ClientTest, ARequestFailingAtTheDeadlineIsDeadlineExceededWithoutFailover) {
  auto client = MakeClient({.servers = "h1:1,h2:2"});
  const absl::Time deadline = absl::Now() + absl::Milliseconds(20);
  Canceller call(nullptr, deadline);
  EXPECT_CALL(*transport_, Execute(_, _)).WillOnce([deadline](const HttpRequest&, Canceller*) {
    absl::SleepFor(deadline - absl::Now());
    return absl::StatusOr<HttpResponse>(absl::UnavailableError("timed out"));
  });
  absl::Status status = client->KvGet("a", {}, &call).status();
  EXPECT_TRUE(absl::IsDeadlineExceeded(status)) << status;
  EXPECT_FALSE(IsNotSent(status));  // it was sent: a write's outcome would be unknown
}

TEST_F(ClientTest, ACallCutByTheDeadlineWhileItWasMadeAgainFailsWithWhyItWasMadeAgain) {
  auto client = MakeClient({.servers = "h1:1", .request_timeout = absl::Seconds(30)});
  const absl::Time deadline = absl::Now() + absl::Milliseconds(200);
  Canceller call(nullptr, deadline);
  {
    InSequence sequence;
    // The first exchange fails, so the call is made again after a back-off; the second
    // exchange is still going at the deadline.
    EXPECT_CALL(*transport_, Execute(_, _))
        .WillOnce(Return(absl::StatusOr<HttpResponse>(ConnectionError("connection refused"))));
    EXPECT_CALL(*transport_, Execute(_, _)).WillOnce([deadline](const HttpRequest&, Canceller*) {
      absl::SleepFor(deadline - absl::Now());
      return absl::StatusOr<HttpResponse>(absl::UnavailableError("timed out"));
    });
  }
  absl::Status status = client->KvGet("a", {}, &call).status();
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("connection refused"));
}

TEST_F(ClientTest, TokenNeverAppearsInErrorMessages) {
  auto client =
      MakeClient({.servers = "h1:1", .token = kToken, .request_timeout = absl::Milliseconds(100)});
  EXPECT_CALL(*transport_, Execute(_, _))
      .WillOnce(Return(Response(403, absl::StrCat("ACL not found: ", kToken))))
      .WillRepeatedly(Return(ConnectionError(absl::StrCat("refused ", kToken))));
  absl::Status denied = client->KvGet("a").status();
  EXPECT_TRUE(absl::IsPermissionDenied(denied));
  EXPECT_THAT(denied.message(), Not(HasSubstr(kToken)));
  absl::Status refused = client->KvGet("a").status();
  EXPECT_THAT(refused.message(), Not(HasSubstr(kToken)));
}

TEST_F(ClientTest, ValidationErrorsNeverReachTheTransport) {
  auto client = MakeClient({.servers = "h1:1"});
  EXPECT_CALL(*transport_, Execute(_, _)).Times(0);
  EXPECT_TRUE(absl::IsInvalidArgument(client->KvGet("/a").status()));
  EXPECT_TRUE(
      absl::IsInvalidArgument(client->KvGet("a", {.consistent = true, .stale = true}).status()));
}

TEST_F(ClientTest, TypedCallsShapeTheirRequests) {
  auto client = MakeClient({.servers = "h1:1", .token = kToken});
  std::vector<HttpRequest> seen;
  EXPECT_CALL(*transport_, Execute(_, _))
      .WillRepeatedly(
          [&seen](const HttpRequest& request, Canceller*) -> absl::StatusOr<HttpResponse> {
            seen.push_back(request);
            if (request.path == "/v1/session/create") return Response(200, R"({"ID":"s1"})");
            if (request.path == "/v1/txn") return Response(200, R"({"Results":[],"Errors":null})");
            if (request.path == "/v1/status/leader") return Response(200, R"("10.0.0.1:8300")");
            if (request.path == "/v1/session/list") return ReadResponse(200, "[]", 2);
            return Response(200, "true");
          });
  EXPECT_EQ(client->CreateSession({.name = "n", .ttl = absl::Seconds(10)}).value(), "s1");
  EXPECT_TRUE(client->DestroySession("s1").ok());
  EXPECT_TRUE(client->KvDelete("a", {.recurse = true}).value());
  EXPECT_TRUE(client->Txn({TxnOp::Set("a", "b")}).value().committed);
  EXPECT_EQ(client->Leader().value(), "10.0.0.1:8300");
  EXPECT_TRUE(client->ListSessions().ok());
  ASSERT_EQ(seen.size(), 6u);
  for (const HttpRequest& request : seen) {
    ASSERT_NE(request.FindHeader("X-Consul-Token"), nullptr) << request.path;
  }
  EXPECT_EQ(seen[1].path, "/v1/session/destroy/s1");
  EXPECT_EQ(seen[2].method, HttpMethod::kDelete);
  EXPECT_EQ(seen[3].method, HttpMethod::kPut);
}

TEST(ClientOptionsTest, BadOptionsAreInvalidArgumentNamingTheOption) {
  auto transport = std::make_shared<MockTransport>();
  struct Case {
    ClientOptions options;
    const char* expected;
  };
  std::vector<Case> cases;
  cases.push_back({{.servers = "h:1,bad"}, "entry 2"});
  cases.push_back({{.servers = "h:1", .connect_timeout = absl::ZeroDuration()}, "connect_timeout"});
  cases.push_back({{.servers = "h:1", .request_timeout = absl::Seconds(-1)}, "request_timeout"});
  cases.push_back({{.servers = "h:1", .blocking_margin = absl::Seconds(-1)}, "blocking_margin"});
  cases.push_back({{.servers = "h:1", .ca_file = "/nonexistent/ca.pem"}, "ca_file"});
  // /dev/null stands for a readable file: only the other option of the pair is at fault.
  cases.push_back(
      {{.servers = "h:1", .cert_file = "/dev/null"}, "cert_file: set without key_file"});
  cases.push_back({{.servers = "h:1", .key_file = "/dev/null"}, "key_file: set without cert_file"});
  cases.push_back({{.servers = "h:1", .cert_file = "/nonexistent/c.pem", .key_file = "/dev/null"},
                   "cert_file '/nonexistent/c.pem'"});
  cases.push_back({{.servers = "h:1", .cert_file = "/dev/null", .key_file = "/nonexistent/k.pem"},
                   "key_file '/nonexistent/k.pem'"});
  cases.push_back({{.servers = "h:1", .server_name = "a..b"}, "server_name 'a..b'"});
  cases.push_back({{.servers = "h:1", .server_name = "a b"}, "server_name 'a b'"});
  for (const Case& c : cases) {
    absl::Status status = Client::Create(c.options, transport).status();
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << c.expected;
    EXPECT_THAT(status.message(), HasSubstr(c.expected));
  }
}

TEST(ClientOptionsTest, TokenWithALineBreakIsRefusedWithoutEchoingIt) {
  absl::Status status = Client::Create({.servers = "h:1", .token = "abc\r\nX-Evil: 1"},
                                       std::make_shared<MockTransport>())
                            .status();
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(status.message(), HasSubstr("token"));
  EXPECT_THAT(status.message(), Not(HasSubstr("abc")));
}

TEST(ApplyClientOptionsTest, KeepsAnExplicitTimeoutAndDatacenter) {
  HttpRequest request;
  request.params = {{"dc", "mine"}};
  request.timeout = absl::Seconds(3);
  ApplyClientOptions({.datacenter = "other"}, &request);
  EXPECT_THAT(request.params, ElementsAre(Pair("dc", "mine")));
  EXPECT_EQ(request.timeout, absl::Seconds(3));
}

}  // namespace
}  // namespace registry::consul

// SPDX-License-Identifier: Apache-2.0
// Real libcurl against loopback sockets made by the test itself (no Consul needed).
#include "consul/curl_transport.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "consul/client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/consul/test_http_server.h"

namespace registry::consul {
namespace {

using ::registry::consul::testing::RefusingPort;
using ::registry::consul::testing::SeenRequest;
using ::registry::consul::testing::SilentListener;
using ::registry::consul::testing::TestHttpServer;
using ::testing::HasSubstr;
using ::testing::Not;

// Echoes the request line as the body, with Consul-like query headers.
std::string EchoRequestLine(const SeenRequest& request) {
  std::string line = request.head.substr(0, request.head.find("\r\n"));
  return TestHttpServer::Reply(200, line + "|" + request.body,
                               "X-Consul-Index: 7\r\nX-Consul-KnownLeader: true\r\n");
}

HttpRequest Get(const std::string& server, const std::string& path) {
  HttpRequest request;
  request.server = server;
  request.path = path;
  request.timeout = absl::Seconds(10);
  return request;
}

TEST(CurlTransportTest, SendsMethodPathParamsAndBodyAndReadsTheResponse) {
  TestHttpServer server(EchoRequestLine);
  CurlTransport transport(CurlOptions{});
  HttpRequest request = Get(server.base_url(), "/v1/kv/a%20b");
  request.method = HttpMethod::kPut;
  request.params = {{"cas", "0"}, {"flags", "3"}};
  request.body = "payload";
  absl::StatusOr<HttpResponse> response = transport.Execute(request, nullptr);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->body, "PUT /v1/kv/a%20b?cas=0&flags=3 HTTP/1.1|payload");
  ASSERT_NE(response->FindHeader("x-consul-index"), nullptr);
  EXPECT_EQ(*response->FindHeader("X-CONSUL-INDEX"), "7");
}

TEST(CurlTransportTest, DotSegmentsInKeysAreSentAsIs) {
  TestHttpServer server(EchoRequestLine);
  CurlTransport transport(CurlOptions{});
  absl::StatusOr<HttpResponse> response =
      transport.Execute(Get(server.base_url(), "/v1/kv/a/../b"), nullptr);
  ASSERT_TRUE(response.ok()) << response.status();
  EXPECT_THAT(response->body, HasSubstr("GET /v1/kv/a/../b "));
}

TEST(CurlTransportTest, SequentialRequestsReuseOneKeepAliveConnection) {
  TestHttpServer server(EchoRequestLine);
  CurlTransport transport(CurlOptions{});
  for (int i = 0; i < 5; ++i) {
    HttpRequest request = Get(server.base_url(), "/v1/kv/k");
    request.method = i % 2 == 0 ? HttpMethod::kGet : HttpMethod::kDelete;
    ASSERT_TRUE(transport.Execute(request, nullptr).ok());
  }
  EXPECT_EQ(server.accepted_connections(), 1);
}

TEST(CurlTransportTest, ConcurrentRequestsFromSeveralThreadsAllSucceed) {
  TestHttpServer server(EchoRequestLine);
  CurlTransport transport(CurlOptions{});
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        if (transport.Execute(Get(server.base_url(), "/v1/kv/x"), nullptr).ok()) ok.fetch_add(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(ok.load(), 40);
  EXPECT_LE(server.accepted_connections(), 4);  // one slot (and connection) per thread at most
}

TEST(CurlTransportTest, CancelAbortsABlockedRequestPromptly) {
  SilentListener listener;
  CurlTransport transport(CurlOptions{});
  Canceller canceller;
  absl::Status result;
  absl::Time returned_at;
  HttpRequest request = Get(listener.base_url(), "/v1/kv/a");
  request.timeout = absl::Seconds(60);
  std::thread caller([&] {
    result = transport.Execute(request, &canceller).status();
    returned_at = absl::Now();
  });
  ASSERT_TRUE(listener.AcceptRequest(absl::Now() + absl::Seconds(10)));
  absl::Time cancelled_at = absl::Now();
  canceller.Cancel();
  caller.join();
  EXPECT_TRUE(absl::IsCancelled(result)) << result;
  // Target is well under 50 ms; the bound leaves room for loaded or sanitizer builds.
  EXPECT_LT(returned_at - cancelled_at, absl::Milliseconds(500));
}

TEST(CurlTransportTest, RequestStartedAfterCancelFailsWithoutConnecting) {
  TestHttpServer server(EchoRequestLine);
  CurlTransport transport(CurlOptions{});
  Canceller canceller;
  canceller.Cancel();
  EXPECT_TRUE(absl::IsCancelled(
      transport.Execute(Get(server.base_url(), "/v1/kv/a"), &canceller).status()));
  EXPECT_EQ(server.accepted_connections(), 0);
}

TEST(CurlTransportTest, ConnectionRefusedIsAnUnavailableConnectionError) {
  RefusingPort refusing;
  CurlTransport transport(CurlOptions{});
  absl::Status status = transport.Execute(Get(refusing.base_url(), "/v1/kv/a"), nullptr).status();
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_TRUE(IsConnectionError(status));
  EXPECT_THAT(status.message(), HasSubstr("consul GET /v1/kv/a"));
}

TEST(CurlTransportTest, UnansweredRequestTimesOutAsUnavailable) {
  SilentListener listener;
  CurlTransport transport(CurlOptions{});
  HttpRequest request = Get(listener.base_url(), "/v1/kv/a");
  request.timeout = absl::Milliseconds(200);
  absl::Status status = transport.Execute(request, nullptr).status();
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_FALSE(IsConnectionError(status));  // the request was sent: not safe to replay a write
}

TEST(CurlTransportTest, TruncatedBodyIsUnavailable) {
  TestHttpServer server([](const SeenRequest&) {
    return std::string("HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n[{\"Ke");
  });
  CurlTransport transport(CurlOptions{});
  absl::Status status = transport.Execute(Get(server.base_url(), "/v1/kv/a"), nullptr).status();
  EXPECT_TRUE(absl::IsUnavailable(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("truncated"));
}

// The server reads a write on the kept-alive connection and dies before answering. libcurl would
// resend it on a new connection; a request that is not replay_safe is never sent twice, and the
// failure says it was sent, whether the resend is refused at its rewind or, as here, its
// reconnect fails first.
TEST(CurlTransportTest, AWriteOnAReusedConnectionToAServerThatDiedIsSentOnceAndNotNotSent) {
  std::atomic<int> writes{0};
  TestHttpServer server([&writes](const SeenRequest& request) -> std::string {
    if (request.head.rfind("PUT", 0) != 0) return EchoRequestLine(request);
    ++writes;
    return TestHttpServer::kDieWithoutReply;
  });
  CurlTransport transport(CurlOptions{});
  ASSERT_TRUE(transport.Execute(Get(server.base_url(), "/v1/kv/warm"), nullptr).ok());
  HttpRequest write = Get(server.base_url(), "/v1/txn");
  write.method = HttpMethod::kPut;
  write.body = R"([{"KV":{"Verb":"set","Key":"k","Value":"dg=="}}])";
  write.replay_safe = false;
  absl::StatusOr<HttpResponse> response = transport.Execute(write, nullptr);
  ASSERT_FALSE(response.ok());
  EXPECT_TRUE(absl::IsUnavailable(response.status())) << response.status();
  EXPECT_FALSE(IsConnectionError(response.status()))
      << "reported as never sent: " << response.status();
  EXPECT_EQ(writes.load(), 1);
  EXPECT_EQ(server.accepted_connections(), 1) << "the write did not ride the kept-alive connection";
}

TEST(CurlTransportTest, HeaderWithLineBreakIsRefusedWithoutShowingTheValue) {
  CurlTransport transport(CurlOptions{});
  HttpRequest request = Get("http://127.0.0.1:1", "/v1/kv/a");
  request.headers = {{"X-Consul-Token", "secret\r\nX-Evil: 1"}};
  absl::Status status = transport.Execute(request, nullptr).status();
  EXPECT_TRUE(absl::IsInvalidArgument(status));
  EXPECT_THAT(status.message(), Not(HasSubstr("secret")));
}

TEST(CurlExchangeTest, DrivesACallerOwnedEasyHandle) {
  TestHttpServer server(EchoRequestLine);
  EnsureCurlInitialized();
  CURL* easy = curl_easy_init();
  ASSERT_NE(easy, nullptr);
  for (int i = 0; i < 2; ++i) {  // the same handle serves several exchanges
    absl::StatusOr<std::unique_ptr<CurlExchange>> exchange =
        CurlExchange::Start(easy, Get(server.base_url(), "/v1/kv/p"), CurlOptions{});
    ASSERT_TRUE(exchange.ok()) << exchange.status();
    absl::StatusOr<HttpResponse> response = (*exchange)->Finish(curl_easy_perform(easy));
    ASSERT_TRUE(response.ok()) << response.status();
    EXPECT_EQ(*response->FindHeader("X-Consul-Index"), "7");
  }
  curl_easy_cleanup(easy);
  EXPECT_EQ(server.accepted_connections(), 1);
}

TEST(CurlClientTest, FailsOverFromARefusingServerToALiveOne) {
  RefusingPort refusing;
  TestHttpServer server([](const SeenRequest& request) {
    EXPECT_THAT(request.head, HasSubstr("X-Consul-Token: tok"));
    return TestHttpServer::Reply(404, "", "X-Consul-Index: 12\r\n");
  });
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Create(
      {.servers = absl::StrCat(refusing.base_url(), ",", server.base_url()), .token = "tok"});
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<KvGetResult> result = (*client)->KvGet("missing/key");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_FALSE(result->entry.has_value());
  EXPECT_EQ(result->meta.index, 12u);
  EXPECT_EQ((*client)->PreferredServer(), server.base_url());
}

}  // namespace
}  // namespace registry::consul

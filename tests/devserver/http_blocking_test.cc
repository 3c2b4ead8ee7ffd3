// SPDX-License-Identifier: Apache-2.0
// Blocking queries over real connections: who wakes, who does not, timeouts, hang-ups.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <vector>

#include "tests/devserver/server_fixture.h"

namespace registry::devserver {
namespace {

using testing::DevServerTest;
using testing::TestResponse;

using HttpBlockingTest = DevServerTest;

std::string IndexOf(const TestResponse& response) { return response.Header("x-consul-index"); }

// A connected raw socket to the server, closed on destruction.
class RawSocket {
 public:
  explicit RawSocket(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~RawSocket() { Close(); }
  bool connected() const { return connected_; }
  bool Send(const std::string& bytes) {
    return send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(bytes.size());
  }
  // Reads until `marker` was received or `timeout` passed.
  std::string ReadUntil(const std::string& marker, absl::Duration timeout) {
    std::string received;
    const absl::Time deadline = absl::Now() + timeout;
    char buffer[2048];
    while (received.find(marker) == std::string::npos) {
      const int left = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
      pollfd poller{fd_, POLLIN, 0};
      if (left <= 0 || poll(&poller, 1, left) <= 0) break;
      const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
      if (n <= 0) break;
      received.append(buffer, static_cast<size_t>(n));
    }
    return received;
  }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
  bool connected_ = false;
};

TEST_F(HttpBlockingTest, ParkedGetReturnsAsSoonAsTheKeyChanges) {
  ASSERT_EQ(client_->Put("/v1/kv/k", "1").status, 200);
  const std::string index = IndexOf(client_->Get("/v1/kv/k"));
  const absl::Time start = absl::Now();
  auto pending = AsyncGet("/v1/kv/k?index=" + index + "&wait=30s");
  ASSERT_TRUE(WaitForParkedQueries(1));
  ASSERT_EQ(client_->Put("/v1/kv/k", "2").status, 200);
  TestResponse response = pending.get();
  EXPECT_EQ(response.status, 200);
  EXPECT_GT(std::stoull(IndexOf(response)), std::stoull(index));
  EXPECT_EQ(response.Json()[0]["Value"], "Mg==");
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

TEST_F(HttpBlockingTest, ParkedGetTimesOutWithTheSameIndexWhenNothingChanges) {
  ASSERT_EQ(client_->Put("/v1/kv/k", "1").status, 200);
  const std::string index = IndexOf(client_->Get("/v1/kv/k"));
  const absl::Time start = absl::Now();
  TestResponse response = client_->Get("/v1/kv/k?index=" + index + "&wait=300ms");
  const absl::Duration elapsed = absl::Now() - start;
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(IndexOf(response), index);
  EXPECT_GE(elapsed, absl::Milliseconds(300));
  EXPECT_LT(elapsed, absl::Seconds(3));
}

TEST_F(HttpBlockingTest, WriteToAnotherKeyDoesNotWakeAKeyQuery) {
  ASSERT_EQ(client_->Put("/v1/kv/k", "1").status, 200);
  const std::string index = IndexOf(client_->Get("/v1/kv/k"));
  const absl::Time start = absl::Now();
  auto pending = AsyncGet("/v1/kv/k?index=" + index + "&wait=500ms");
  ASSERT_TRUE(WaitForParkedQueries(1));
  ASSERT_EQ(client_->Put("/v1/kv/k2", "x").status, 200);
  ASSERT_EQ(client_->Put("/v1/kv/other", "x").status, 200);
  TestResponse response = pending.get();
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(500));
  EXPECT_EQ(IndexOf(response), index);
}

TEST_F(HttpBlockingTest, IdenticalWriteDoesNotWakeAKeyQuery) {
  ASSERT_EQ(client_->Put("/v1/kv/k", "same").status, 200);
  const std::string index = IndexOf(client_->Get("/v1/kv/k"));
  const absl::Time start = absl::Now();
  auto pending = AsyncGet("/v1/kv/k?index=" + index + "&wait=500ms");
  ASSERT_TRUE(WaitForParkedQueries(1));
  ASSERT_EQ(client_->Put("/v1/kv/k", "same").status, 200);
  TestResponse response = pending.get();
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(500));
  EXPECT_EQ(IndexOf(response), index);
}

TEST_F(HttpBlockingTest, MissingKeyQueryWakesOnlyWhenTheKeyAppears) {
  ASSERT_EQ(client_->Put("/v1/kv/noise", "1").status, 200);
  const std::string index = IndexOf(client_->Get("/v1/kv/wanted"));
  auto pending = AsyncGet("/v1/kv/wanted?index=" + index + "&wait=30s");
  ASSERT_TRUE(WaitForParkedQueries(1));
  ASSERT_EQ(client_->Put("/v1/kv/noise", "2").status, 200);  // raises the table index
  ASSERT_EQ(client_->Put("/v1/kv/wanted", "now").status, 200);
  TestResponse response = pending.get();
  EXPECT_EQ(response.status, 200);  // a wake-up on the noise would have been a 404
}

TEST_F(HttpBlockingTest, DeletingTheWatchedKeyWakesWith404AndTheDeleteIndex) {
  ASSERT_EQ(client_->Put("/v1/kv/k", "1").status, 200);
  const std::string index = IndexOf(client_->Get("/v1/kv/k"));
  auto pending = AsyncGet("/v1/kv/k?index=" + index + "&wait=30s");
  ASSERT_TRUE(WaitForParkedQueries(1));
  ASSERT_EQ(client_->Delete("/v1/kv/k").status, 200);
  TestResponse response = pending.get();
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(IndexOf(response), std::to_string(server_->store().last_index()));
}

TEST_F(HttpBlockingTest, RecurseQueryWakesOnADeleteUnderThePrefix) {
  ASSERT_EQ(client_->Put("/v1/kv/p/a", "1").status, 200);
  ASSERT_EQ(client_->Put("/v1/kv/p/b", "1").status, 200);
  const std::string index = IndexOf(client_->Get("/v1/kv/p/?recurse"));
  auto pending = AsyncGet("/v1/kv/p/?recurse&index=" + index + "&wait=30s");
  ASSERT_TRUE(WaitForParkedQueries(1));
  ASSERT_EQ(client_->Put("/v1/kv/q/a", "1").status, 200);
  ASSERT_EQ(client_->Delete("/v1/kv/p/a").status, 200);
  TestResponse response = pending.get();
  ASSERT_EQ(response.status, 200);
  EXPECT_EQ(response.Json().size(), 1u);
  EXPECT_EQ(IndexOf(response), std::to_string(server_->store().last_index()));
}

TEST_F(HttpBlockingTest, OneWriteWakesEveryParkedQueryOnThatKey) {
  ASSERT_EQ(client_->Put("/v1/kv/hot", "1").status, 200);
  const std::string index = IndexOf(client_->Get("/v1/kv/hot"));
  const std::string request =
      "GET /v1/kv/hot?index=" + index + "&wait=30s HTTP/1.1\r\nHost: x\r\n\r\n";
  std::vector<std::unique_ptr<RawSocket>> watchers;
  for (int i = 0; i < 64; ++i) {
    watchers.push_back(std::make_unique<RawSocket>(server_->port()));
    ASSERT_TRUE(watchers.back()->connected());
    ASSERT_TRUE(watchers.back()->Send(request));
  }
  ASSERT_TRUE(WaitForParkedQueries(64));
  ASSERT_EQ(client_->Put("/v1/kv/hot", "2").status, 200);
  for (auto& watcher : watchers) {
    EXPECT_NE(watcher->ReadUntil("Mg==", absl::Seconds(5)).find("HTTP/1.1 200"), std::string::npos);
  }
}

TEST_F(HttpBlockingTest, ClientHangUpReleasesItsParkedQuery) {
  ASSERT_EQ(client_->Put("/v1/kv/k", "1").status, 200);
  const std::string index = IndexOf(client_->Get("/v1/kv/k"));
  RawSocket socket(server_->port());
  ASSERT_TRUE(socket.Send("GET /v1/kv/k?index=" + index + "&wait=10m HTTP/1.1\r\nHost: x\r\n\r\n"));
  ASSERT_TRUE(WaitForParkedQueries(1));
  socket.Close();
  EXPECT_TRUE(WaitForParkedQueries(0));
}

TEST_F(HttpBlockingTest, WaitIsCappedAtTheConfiguredMaxQueryTime) {
  auto options = DefaultOptions();
  options.max_query_time = absl::Milliseconds(300);
  StartServer(options);
  ASSERT_EQ(client_->Put("/v1/kv/k", "1").status, 200);
  const std::string index = IndexOf(client_->Get("/v1/kv/k"));
  const absl::Time start = absl::Now();
  EXPECT_EQ(client_->Get("/v1/kv/k?index=" + index + "&wait=1h").status, 200);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
}

TEST_F(HttpBlockingTest, NonPositiveWaitUsesTheConfiguredDefaultQueryTime) {
  auto options = DefaultOptions();
  options.default_query_time = absl::Milliseconds(300);
  StartServer(options);
  ASSERT_EQ(client_->Put("/v1/kv/k", "1").status, 200);
  const std::string index = IndexOf(client_->Get("/v1/kv/k"));
  const absl::Time start = absl::Now();
  EXPECT_EQ(client_->Get("/v1/kv/k?index=" + index + "&wait=0s").status, 200);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(300));
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
}

TEST_F(HttpBlockingTest, BadWaitOrIndexIs400) {
  TestResponse wait = client_->Get("/v1/kv/k?index=1&wait=15");
  EXPECT_EQ(wait.status, 400);
  EXPECT_EQ(wait.body, "Invalid wait time");
  TestResponse index = client_->Get("/v1/kv/k?index=-1");
  EXPECT_EQ(index.status, 400);
  EXPECT_EQ(index.body, "Invalid index");
}

TEST_F(HttpBlockingTest, SessionListQueryWakesWhenASessionIsCreated) {
  const std::string index = IndexOf(client_->Get("/v1/session/list"));
  auto pending = AsyncGet("/v1/session/list?index=" + index + "&wait=30s");
  ASSERT_TRUE(WaitForParkedQueries(1));
  const std::string id = CreateSession();
  TestResponse response = pending.get();
  ASSERT_EQ(response.Json().size(), 1u);
  EXPECT_EQ(response.Json()[0]["ID"], id);
}

TEST_F(HttpBlockingTest, StopEndsParkedQueriesPromptly) {
  auto pending = AsyncGet("/v1/kv/k?index=100&wait=10m");
  ASSERT_TRUE(WaitForParkedQueries(1));
  const absl::Time start = absl::Now();
  server_->Stop();
  server_->Stop();  // idempotent
  TestResponse response = pending.get();
  EXPECT_EQ(response.status, 0);  // connection closed without an answer
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(server_->store().watch_count(), 0u);
}

TEST_F(HttpBlockingTest, KeptAliveConnectionServesManyRequests) {
  for (int i = 0; i < 20; ++i) ASSERT_EQ(client_->Put("/v1/kv/k", std::to_string(i)).status, 200);
  EXPECT_EQ(server_->connection_count(), 1u);
}

}  // namespace
}  // namespace registry::devserver

// SPDX-License-Identifier: Apache-2.0
// What one client may hold of the dev server: a connection that sends no whole request within
// the read timeout is closed, and one client address holds at most max_conns_per_client
// connections.
#include <memory>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "tests/devserver/server_fixture.h"

namespace registry::devserver {
namespace {

using testing::DevServerTest;
using testing::RawConnection;

constexpr absl::Duration kReadTimeout = absl::Milliseconds(300);
// Far longer than kReadTimeout: a connection the server does not close is still open then.
constexpr absl::Duration kPatience = absl::Seconds(5);
constexpr char kWholeRequest[] = "GET /v1/status/leader HTTP/1.1\r\nHost: test\r\n\r\n";

class HttpConnectionLimitsTest : public DevServerTest {
 protected:
  void SetUp() override {
    ServerOptions options = DefaultOptions();
    options.read_timeout = kReadTimeout;
    options.max_conns_per_client = 2;
    StartServer(options);
  }
};

TEST_F(HttpConnectionLimitsTest, AConnectionThatSendsNothingIsClosedAfterTheReadTimeout) {
  RawConnection idle(server_->port());
  ASSERT_TRUE(idle.connected());
  const absl::Time start = absl::Now();
  const RawConnection::Received received = idle.Receive(kPatience);
  EXPECT_TRUE(received.closed);
  EXPECT_EQ(received.bytes, "");
  EXPECT_GE(absl::Now() - start, kReadTimeout - absl::Milliseconds(5));
  EXPECT_LT(absl::Now() - start, kPatience);
}

TEST_F(HttpConnectionLimitsTest, ARequestSentSlowerThanTheReadTimeoutIsClosedUnanswered) {
  RawConnection slow(server_->port());
  ASSERT_TRUE(slow.Send("GET /v1/status/leader HTTP/1.1\r\nHost: te"));  // never finished
  const RawConnection::Received received = slow.Receive(kPatience);
  EXPECT_TRUE(received.closed);
  EXPECT_EQ(received.bytes, "");
}

TEST_F(HttpConnectionLimitsTest, TheTimeoutCountsAgainFromEachAnsweredRequest) {
  RawConnection kept(server_->port());
  for (int i = 0; i < 3; ++i) {
    absl::SleepFor(kReadTimeout / 2);  // idle, but each time less than the timeout
    ASSERT_TRUE(kept.Send(kWholeRequest)) << i;
    const RawConnection::Received reply = kept.Receive(kPatience, 12);
    EXPECT_EQ(reply.bytes.substr(0, 12), "HTTP/1.1 200") << i;
    ASSERT_FALSE(reply.closed) << i;
  }
}

TEST_F(HttpConnectionLimitsTest, AClientOverItsConnectionLimitIsClosedAndTheOthersServe) {
  ServerOptions options = DefaultOptions();
  options.max_conns_per_client = 2;  // and the default read timeout: nothing closes by time
  StartServer(options);
  std::vector<std::unique_ptr<RawConnection>> held;
  for (int i = 0; i < 2; ++i) {
    held.push_back(std::make_unique<RawConnection>(server_->port()));
    ASSERT_TRUE(held.back()->connected());
  }
  ASSERT_TRUE(::registry::testing::Eventually([&] { return server_->connection_count() == 2; }));
  RawConnection third(server_->port());
  const RawConnection::Received refused = third.Receive(kPatience);
  EXPECT_TRUE(refused.closed);
  EXPECT_EQ(refused.bytes, "");
  // The two held connections still serve, and a closed one makes room for a new one.
  ASSERT_TRUE(held[0]->Send(kWholeRequest));
  EXPECT_EQ(held[0]->Receive(kPatience, 12).bytes.substr(0, 12), "HTTP/1.1 200");
  held.pop_back();
  ASSERT_TRUE(::registry::testing::Eventually([&] { return server_->connection_count() == 1; }));
  RawConnection fourth(server_->port());
  ASSERT_TRUE(fourth.Send(kWholeRequest));
  EXPECT_EQ(fourth.Receive(kPatience, 12).bytes.substr(0, 12), "HTTP/1.1 200");
}

TEST(DevServerOptionsTest, ANegativeConnectionLimitOrANonPositiveReadTimeoutIsRefused) {
  ServerOptions options;
  options.max_conns_per_client = -1;
  absl::StatusOr<std::unique_ptr<DevServer>> server = DevServer::Start(options);
  EXPECT_TRUE(absl::IsInvalidArgument(server.status())) << server.status();
  EXPECT_NE(server.status().message().find("max_conns_per_client"), std::string::npos);
  options.max_conns_per_client = 0;
  options.read_timeout = absl::ZeroDuration();
  server = DevServer::Start(options);
  EXPECT_TRUE(absl::IsInvalidArgument(server.status())) << server.status();
  EXPECT_NE(server.status().message().find("read_timeout"), std::string::npos);
}

}  // namespace
}  // namespace registry::devserver

// integration/testing/dev_server_test.cc
#include "integration/testing/dev_server_test.h"

#include <utility>

#include "absl/time/clock.h"

namespace registry::testing {

devserver::ServerOptions DevServerTest::ServerOptions(const std::string& http_addr) {
  devserver::ServerOptions options;
  options.http_addr = http_addr;
  options.session_ttl_min = absl::Seconds(1);
  options.enable_fault_injection = true;
  return options;
}

void DevServerTest::SetUp() {
  absl::StatusOr<std::unique_ptr<devserver::DevServer>> server =
      devserver::DevServer::Start(ServerOptions("127.0.0.1:0"));
  ASSERT_TRUE(server.ok()) << server.status();
  server_ = *std::move(server);
  address_ = server_->address();
  consul::ClientOptions client;
  client.servers = address_;
  client.request_timeout = absl::Seconds(5);
  absl::StatusOr<std::unique_ptr<consul::Client>> raw = consul::Client::Create(client);
  ASSERT_TRUE(raw.ok()) << raw.status();
  raw_ = *std::move(raw);
}

void DevServerTest::TearDown() {
  raw_.reset();
  if (server_ != nullptr) server_->Stop();
}

void DevServerTest::RestartServer() {
  server_->Stop();
  server_.reset();
  absl::StatusOr<std::unique_ptr<devserver::DevServer>> server =
      devserver::DevServer::Start(ServerOptions(address_));
  ASSERT_TRUE(server.ok()) << server.status();
  server_ = *std::move(server);
}

std::optional<std::string> DevServerTest::KeySession(const std::string& consul_key) {
  absl::StatusOr<consul::KvGetResult> result = raw_->KvGet(consul_key);
  EXPECT_TRUE(result.ok()) << consul_key << ": " << result.status();
  if (!result.ok() || !result->entry.has_value()) return std::nullopt;
  return result->entry->session;
}

bool Eventually(const std::function<bool()>& condition, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!condition()) {
    if (absl::Now() >= deadline) return condition();
    absl::SleepFor(absl::Milliseconds(10));
  }
  return true;
}

}  // namespace registry::testing

// SPDX-License-Identifier: Apache-2.0
// integration/testing/server_test.cc
#include "integration/testing/server_test.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "integration/testing/dev_control.h"

namespace registry::testing {

devserver::ServerOptions ServerTest::DevServerOptions(const std::string& http_addr) {
  devserver::ServerOptions options;
  options.http_addr = http_addr;
  options.session_ttl_min = absl::Seconds(1);
  options.enable_fault_injection = true;
  // Some suites hold more connections than Consul's per-client limit allows (a thousand
  // watches, each parking one); tests/devserver tests the limit itself.
  options.max_conns_per_client = 0;
  return options;
}

void ServerTest::SetUp() {
  absl::StatusOr<ServerKind> kind = integration::ServerKindFromEnv();
  ASSERT_TRUE(kind.ok()) << kind.status();
  kind_ = *kind;
  std::string admin_token;
  if (kind_ == ServerKind::kDevServer) {
    absl::StatusOr<std::unique_ptr<devserver::DevServer>> server =
        devserver::DevServer::Start(DevServerOptions("127.0.0.1:0"));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    address_ = server_->address();
  } else {
    absl::StatusOr<integration::RealConsul> consul = integration::StartRealConsul(kind_);
    ASSERT_TRUE(consul.ok()) << consul.status();
    agent_ = std::move(consul->agent);
    address_ = consul->address;
    token_ = consul->token;
    admin_token = consul->admin_token;
    external_ = consul->external;
    if (consul->https) {
      tls_.servers = agent_->base_url();
      tls_.ca_file = agent_->pki().ca_file;
      tls_.cert_file = agent_->pki().client_cert;
      tls_.key_file = agent_->pki().client_key;
    }
  }
  consul::ClientOptions client = ClientOptionsForCodeUnderTest();
  client.token = admin_token;
  client.request_timeout = absl::Seconds(5);
  absl::StatusOr<std::unique_ptr<consul::Client>> raw = consul::Client::Create(client);
  ASSERT_TRUE(raw.ok()) << raw.status();
  raw_ = *std::move(raw);
  if (external_) WipeExternal(admin_token);
}

consul::ClientOptions ServerTest::ClientOptionsForCodeUnderTest() const {
  consul::ClientOptions options = tls_;
  if (options.servers == consul::ClientOptions().servers) options.servers = address_;
  options.token = token_;
  return options;
}

void ServerTest::WipeExternal(const std::string& admin_token) {
  absl::StatusOr<integration::HttpReply> wiped =
      integration::HttpCall("DELETE", absl::StrCat("http://", address_, "/v1/kv/?recurse"),
                            absl::Seconds(5), "", admin_token);
  ASSERT_TRUE(wiped.ok() && wiped->status == 200)
      << "cannot empty the KV store of " << address_ << ": "
      << (wiped.ok() ? wiped->body : wiped.status().ToString());
  absl::StatusOr<consul::SessionListResult> sessions = raw_->ListSessions();
  ASSERT_TRUE(sessions.ok()) << sessions.status();
  for (const consul::SessionInfo& session : sessions->sessions) {
    ASSERT_TRUE(raw_->DestroySession(session.id).ok()) << session.id;
  }
}

void ServerTest::TearDown() {
  raw_.reset();
  if (server_ != nullptr) server_->Stop();
  if (agent_ != nullptr && HasFailure()) agent_->KeepFilesAndPrintLog();
  agent_.reset();
}

void ServerTest::RestartServer() {
  if (agent_ != nullptr) {
    const absl::Status restarted = agent_->Restart();
    ASSERT_TRUE(restarted.ok()) << restarted;
    return;
  }
  ASSERT_NE(server_, nullptr) << "an external agent cannot be restarted by the test";
  server_->Stop();
  server_.reset();
  absl::StatusOr<std::unique_ptr<devserver::DevServer>> server =
      devserver::DevServer::Start(DevServerOptions(address_));
  ASSERT_TRUE(server.ok()) << server.status();
  server_ = *std::move(server);
}

std::optional<std::string> ServerTest::KeySession(const std::string& consul_key) {
  absl::StatusOr<consul::KvGetResult> result = raw_->KvGet(consul_key);
  EXPECT_TRUE(result.ok()) << consul_key << ": " << result.status();
  if (!result.ok() || !result->entry.has_value()) return std::nullopt;
  return result->entry->session;
}

absl::Status ServerTest::ExpireSession(const std::string& id) {
  if (server_ != nullptr) return server_->ExpireSession(id);
  return raw_->DestroySession(id);
}

devserver::DevServer& ServerTest::server() {
  if (server_ == nullptr) {
    const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
    std::fprintf(stderr,
                 "%s.%s needs the dev server but runs on %s: derive it from DevServerOnly\n",
                 test->test_suite_name(), test->name(), integration::ServerKindName(kind_).data());
    std::abort();
  }
  return *server_;
}

int ProcessThreadCount() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (absl::StartsWith(line, "Threads:")) {
      int threads = 0;
      if (absl::SimpleAtoi(absl::StripPrefix(line, "Threads:"), &threads)) return threads;
    }
  }
  return -1;
}

}  // namespace registry::testing

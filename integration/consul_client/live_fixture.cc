// SPDX-License-Identifier: Apache-2.0
#include "integration/consul_client/live_fixture.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>

#include "absl/strings/str_cat.h"

namespace registry::consul::live {

devserver::ServerOptions TestServerOptions() {
  devserver::ServerOptions options;
  options.http_addr = "127.0.0.1:0";
  options.session_ttl_min = absl::Seconds(1);
  options.enable_fault_injection = true;
  return options;
}

std::string BaseUrl(const devserver::DevServer& server) {
  return absl::StrCat("http://", server.address());
}

int ClosedPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  ::close(fd);  // never listened on: connections to it are refused
  return port;
}

uint64_t RequestCount(devserver::DevServer& server, const std::string& endpoint) {
  std::map<std::string, uint64_t> counts = server.RequestCounts();
  auto it = counts.find(endpoint);
  return it == counts.end() ? 0 : it->second;
}

bool AwaitRequestCount(devserver::DevServer& server, const std::string& endpoint, uint64_t count,
                       absl::Duration timeout) {
  // The counters have no notification to wait on.
  return registry::testing::Eventually([&] { return RequestCount(server, endpoint) >= count; },
                                       timeout);
}

void LiveClientTest::SetUp() {
  ServerTest::SetUp();
  if (HasFatalFailure() || IsSkipped()) return;
  ClientOptions options;
  options.servers = address();
  options.token = token();
  client_ = NewClient(options);
  ASSERT_NE(client_, nullptr);
}

std::unique_ptr<devserver::DevServer> LiveClientTest::StartServer(
    devserver::ServerOptions options) {
  absl::StatusOr<std::unique_ptr<devserver::DevServer>> server =
      devserver::DevServer::Start(std::move(options));
  if (!server.ok()) {
    ADD_FAILURE() << "dev server did not start: " << server.status();
    return nullptr;
  }
  return std::move(server).value();
}

std::unique_ptr<Client> LiveClientTest::NewClient(ClientOptions options) {
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Create(std::move(options));
  if (!client.ok()) {
    ADD_FAILURE() << "client not created: " << client.status();
    return nullptr;
  }
  return std::move(client).value();
}

uint64_t LiveClientTest::Put(const std::string& key, const std::string& value) {
  absl::StatusOr<bool> put = client_->KvPut(key, value);
  if (!put.ok() || !*put) {
    ADD_FAILURE() << "put " << key << " failed: " << put.status();
    return 0;
  }
  std::optional<DirEntry> entry = Lookup(key);
  if (!entry.has_value()) {
    ADD_FAILURE() << "put " << key << " but it reads back absent";
    return 0;
  }
  return entry->modify_index;
}

std::optional<DirEntry> LiveClientTest::Lookup(const std::string& key) {
  absl::StatusOr<KvGetResult> get = client_->KvGet(key);
  if (!get.ok()) {
    ADD_FAILURE() << "get " << key << " failed: " << get.status();
    return std::nullopt;
  }
  return get->entry;
}

std::string LiveClientTest::NewSession(const SessionCreateOptions& options) {
  absl::StatusOr<std::string> id = client_->CreateSession(options);
  if (!id.ok()) {
    ADD_FAILURE() << "session " << options.name << " not created: " << id.status();
    return "";
  }
  return *id;
}

SessionCreateOptions LiveClientTest::PlainSession(const std::string& name) {
  SessionCreateOptions options;
  options.name = name;
  options.lock_delay = absl::ZeroDuration();
  return options;
}

}  // namespace registry::consul::live

// SPDX-License-Identifier: Apache-2.0
// devserver_bench: measures consul-dev-server and prints the numbers as one JSON object.
//
//   devserver_bench [--ops=20000] [--parked=10000] [--watchers=1000]
//
// It starts the consul-dev-server binary as a child process (so that its RSS is its own)
// and measures:
//   - PUT and GET operations per second, sequentially on one kept-alive connection;
//   - the server's RSS before and with `parked` blocking queries open at once;
//   - the time from a PUT to the wake-up of `watchers` blocking queries on that key.
// A benchmark, not a test: it asserts nothing.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "integration/testing/dev_control.h"
#include "nlohmann/json.hpp"

namespace {

// A blocking HTTP/1.1 connection to 127.0.0.1:port.
class Connection {
 public:
  explicit Connection(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ok_ = fd_ >= 0 && connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
    int one = 1;
    if (ok_) setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  ~Connection() {
    if (fd_ >= 0) close(fd_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  bool ok() const { return ok_; }
  int fd() const { return fd_; }

  bool Send(const std::string& method, const std::string& target, const std::string& body = "") {
    std::string request = absl::StrCat(method, " ", target, " HTTP/1.1\r\nHost: bench\r\n");
    if (method != "GET") absl::StrAppend(&request, "Content-Length: ", body.size(), "\r\n");
    absl::StrAppend(&request, "\r\n", body);
    size_t sent = 0;
    while (sent < request.size()) {
      const ssize_t n = send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) return false;
      sent += static_cast<size_t>(n);
    }
    return true;
  }

  // Reads one response; returns its status (0 on error) and body.
  int Receive(std::string* body) {
    std::string& data = pending_;
    size_t header_end;
    while ((header_end = data.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return 0;
    }
    size_t length = 0;
    for (absl::string_view line : absl::StrSplit(data.substr(0, header_end), "\r\n")) {
      constexpr absl::string_view kLength = "content-length:";
      if (line.size() > kLength.size() &&
          absl::AsciiStrToLower(line.substr(0, kLength.size())) == kLength) {
        (void)absl::SimpleAtoi(absl::StripAsciiWhitespace(line.substr(kLength.size())), &length);
      }
    }
    while (data.size() < header_end + 4 + length) {
      if (!Fill()) return 0;
    }
    int status = 0;
    (void)absl::SimpleAtoi(data.substr(9, 3), &status);
    if (body != nullptr) *body = data.substr(header_end + 4, length);
    data.erase(0, header_end + 4 + length);
    return status;
  }

  int Request(const std::string& method, const std::string& target, const std::string& body = "",
              std::string* response = nullptr) {
    return Send(method, target, body) ? Receive(response) : 0;
  }

 private:
  bool Fill() {
    char buffer[16384];
    const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
    if (n <= 0) return false;
    pending_.append(buffer, static_cast<size_t>(n));
    return true;
  }

  int fd_;
  bool ok_ = false;
  std::string pending_;
};

long RssKiB(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    long kib = 0;
    if (line.rfind("VmRSS:", 0) == 0 &&
        absl::SimpleAtoi(absl::StripAsciiWhitespace(absl::StripSuffix(line.substr(6), "kB")),
                         &kib)) {
      return kib;
    }
  }
  return -1;
}

uint64_t Counter(Connection& control, const std::string& name) {
  std::string body;
  if (control.Request("GET", "/v1/_dev/stats", "", &body) != 200) return 0;
  auto stats = nlohmann::json::parse(body, nullptr, false);
  return stats.is_object() ? stats.value(name, uint64_t{0}) : 0;
}

std::string IndexOf(Connection& connection, const std::string& key) {
  connection.Send("GET", "/v1/kv/" + key);
  std::string body;
  connection.Receive(&body);
  auto entries = nlohmann::json::parse(body, nullptr, false);
  return entries.is_array() ? std::to_string(entries[0]["ModifyIndex"].get<uint64_t>()) : "1";
}

// Opens `count` connections, each parking a blocking GET on `key` at its current index, and
// returns once the server has counted them all.
std::vector<std::unique_ptr<Connection>> Park(int port, Connection& control, const std::string& key,
                                              int count) {
  const std::string index = IndexOf(control, key);
  const uint64_t before = Counter(control, "kv.get");
  std::vector<std::unique_ptr<Connection>> parked;
  parked.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    auto connection = std::make_unique<Connection>(port);
    if (!connection->ok() ||
        !connection->Send("GET", "/v1/kv/" + key + "?index=" + index + "&wait=5m")) {
      std::fprintf(stderr, "devserver_bench: could not open connection %d\n", i);
      break;
    }
    parked.push_back(std::move(connection));
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (Counter(control, "kv.get") < before + parked.size() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  return parked;
}

}  // namespace

int main(int argc, char** argv) {
  int ops = 20000, parked_count = 10000, watchers = 1000;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (absl::ConsumePrefix(&arg, "--ops=")) (void)absl::SimpleAtoi(arg, &ops);
    if (absl::ConsumePrefix(&arg, "--parked=")) (void)absl::SimpleAtoi(arg, &parked_count);
    if (absl::ConsumePrefix(&arg, "--watchers=")) (void)absl::SimpleAtoi(arg, &watchers);
  }
  rlimit files{};
  getrlimit(RLIMIT_NOFILE, &files);
  files.rlim_cur = files.rlim_max;
  setrlimit(RLIMIT_NOFILE, &files);

  absl::StatusOr<registry::integration::DevServerProcess> server =
      // Thousands of parked connections from one address: no per-client limit.
      registry::integration::StartDevServer(CONSUL_DEV_SERVER_PATH,
                                            {"--http-max-conns-per-client=0"});
  int port = 0;
  if (!server.ok() ||
      !absl::SimpleAtoi(server->address.substr(server->address.rfind(':') + 1), &port)) {
    std::fprintf(stderr, "devserver_bench: could not start %s\n", CONSUL_DEV_SERVER_PATH);
    return 1;
  }
  const pid_t server_pid = server->process->pid();
  nlohmann::ordered_json report;
  Connection control(port);

  {  // Sequential PUT then GET on one kept-alive connection.
    Connection connection(port);
    const std::string value(100, 'v');
    absl::Time start = absl::Now();
    for (int i = 0; i < ops; ++i) {
      connection.Request("PUT", "/v1/kv/bench/k" + std::to_string(i % 1000),
                         value + std::to_string(i));
    }
    const double put_seconds = absl::ToDoubleSeconds(absl::Now() - start);
    start = absl::Now();
    for (int i = 0; i < ops; ++i)
      connection.Request("GET", "/v1/kv/bench/k" + std::to_string(i % 1000));
    const double get_seconds = absl::ToDoubleSeconds(absl::Now() - start);
    report["put_ops_per_sec"] = static_cast<int64_t>(ops / put_seconds);
    report["get_ops_per_sec"] = static_cast<int64_t>(ops / get_seconds);
  }

  {  // RSS with many parked blocking queries.
    report["rss_mib_idle"] = RssKiB(server_pid) / 1024.0;
    control.Request("PUT", "/v1/kv/bench/parked", "x");
    auto parked = Park(port, control, "bench/parked", parked_count);
    report["parked_queries"] = parked.size();
    report["rss_mib_parked"] = RssKiB(server_pid) / 1024.0;
  }  // closing the sockets releases them

  {  // PUT -> wake-up of many watchers of one key.
    control.Request("PUT", "/v1/kv/bench/hot", "0");
    auto parked = Park(port, control, "bench/hot", watchers);
    std::vector<pollfd> polls;
    for (auto& connection : parked) polls.push_back({connection->fd(), POLLIN, 0});
    const absl::Time start = absl::Now();
    control.Request("PUT", "/v1/kv/bench/hot", "1");
    const double put_ms = absl::ToDoubleMilliseconds(absl::Now() - start);
    std::vector<double> wake_ms;
    size_t remaining = polls.size();
    const absl::Time deadline = start + absl::Seconds(30);
    while (remaining > 0 && absl::Now() < deadline) {
      if (poll(polls.data(), polls.size(), 1000) <= 0) continue;
      const double now_ms = absl::ToDoubleMilliseconds(absl::Now() - start);
      for (size_t i = 0; i < polls.size(); ++i) {
        if (polls[i].fd >= 0 && (polls[i].revents & (POLLIN | POLLHUP | POLLERR))) {
          parked[i]->Receive(nullptr);
          wake_ms.push_back(now_ms);
          polls[i].fd = -1;
          --remaining;
        }
      }
    }
    std::sort(wake_ms.begin(), wake_ms.end());
    report["watchers"] = parked.size();
    report["watchers_woken"] = wake_ms.size();
    report["put_latency_ms"] = put_ms;
    if (!wake_ms.empty()) {
      report["wake_first_ms"] = wake_ms.front();
      report["wake_median_ms"] = wake_ms[wake_ms.size() / 2];
      report["wake_all_ms"] = wake_ms.back();
    }
  }

  server->process->Signal(SIGTERM);
  report["server_exit_code"] = server->process->Wait(absl::Now() + absl::Seconds(10)).value_or(-1);
  std::printf("%s\n", report.dump(2).c_str());
  return 0;
}

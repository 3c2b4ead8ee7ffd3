// SPDX-License-Identifier: Apache-2.0
#include "tests/consul/test_http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace registry::consul::testing {
namespace {

// Binds a TCP socket to 127.0.0.1:0, optionally listening; aborts the test binary on failure
// (no meaningful test can run without loopback).
int BindLoopback(bool listen_too, int* port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 ||
      (listen_too && listen(fd, 16) != 0)) {
    std::abort();
  }
  socklen_t length = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  *port = ntohs(address.sin_port);
  return fd;
}

std::string LoopbackUrl(int port) { return absl::StrCat("http://127.0.0.1:", port); }

size_t ContentLength(absl::string_view head) {
  for (absl::string_view line : absl::StrSplit(head, "\r\n")) {
    if (absl::StartsWithIgnoreCase(line, "content-length:")) {
      size_t length = 0;
      if (absl::SimpleAtoi(absl::StripAsciiWhitespace(line.substr(15)), &length)) return length;
    }
  }
  return 0;
}

}  // namespace

TestHttpServer::TestHttpServer(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = BindLoopback(/*listen_too=*/true, &port_);
  if (pipe2(stop_pipe_, O_CLOEXEC) != 0) std::abort();
  thread_ = std::thread([this] { Serve(); });
}

TestHttpServer::~TestHttpServer() {
  char byte = 0;
  (void)!write(stop_pipe_[1], &byte, 1);
  thread_.join();
  close(stop_pipe_[0]);
  close(stop_pipe_[1]);
  if (listen_fd_ >= 0) close(listen_fd_);
}

std::string TestHttpServer::base_url() const { return LoopbackUrl(port_); }

std::string TestHttpServer::Reply(int status, const std::string& body, const std::string& headers) {
  return absl::StrCat("HTTP/1.1 ", status, " X\r\n", headers, "Content-Length: ", body.size(),
                      "\r\n\r\n", body);
}

void TestHttpServer::Serve() {
  std::map<int, std::string> buffers;  // connection fd -> unparsed bytes
  while (true) {
    // poll() skips a negative fd: the listener once closed by kDieWithoutReply.
    std::vector<pollfd> fds = {{stop_pipe_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    for (const auto& [fd, buffer] : buffers) fds.push_back({fd, POLLIN, 0});
    if (poll(fds.data(), fds.size(), -1) < 0) continue;
    if (fds[0].revents != 0) break;
    if (fds[1].revents & POLLIN) {
      int conn = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (conn >= 0) {
        accepted_.fetch_add(1);
        buffers[conn];
      }
    }
    for (size_t i = 2; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      int fd = fds[i].fd;
      char chunk[4096];
      ssize_t got = read(fd, chunk, sizeof(chunk));
      if (got <= 0) {
        close(fd);
        buffers.erase(fd);
        continue;
      }
      std::string& buffer = buffers[fd];
      buffer.append(chunk, static_cast<size_t>(got));
      size_t end;
      while ((end = buffer.find("\r\n\r\n")) != std::string::npos) {
        SeenRequest request{buffer.substr(0, end), ""};
        size_t length = ContentLength(request.head);
        if (buffer.size() < end + 4 + length) break;  // body not complete yet
        request.body = buffer.substr(end + 4, length);
        buffer.erase(0, end + 4 + length);
        std::string reply = handler_(request);
        if (reply == kDieWithoutReply) {
          close(listen_fd_);
          listen_fd_ = -1;
          close(fd);
          buffers.erase(fd);
          break;
        }
        (void)!write(fd, reply.data(), reply.size());
        if (absl::StrContains(reply, "\r\nConnection: close\r\n")) {
          close(fd);
          buffers.erase(fd);
          break;
        }
      }
    }
  }
  for (const auto& [fd, buffer] : buffers) close(fd);
}

SilentListener::SilentListener() { listen_fd_ = BindLoopback(/*listen_too=*/true, &port_); }

SilentListener::~SilentListener() {
  if (conn_fd_ >= 0) close(conn_fd_);
  close(listen_fd_);
}

std::string SilentListener::base_url() const { return LoopbackUrl(port_); }

bool SilentListener::AcceptRequest(absl::Time deadline) {
  pollfd listen_poll{listen_fd_, POLLIN, 0};
  int wait_ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
  if (wait_ms <= 0 || poll(&listen_poll, 1, wait_ms) != 1) return false;
  conn_fd_ = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
  if (conn_fd_ < 0) return false;
  std::string received;
  while (received.find("\r\n\r\n") == std::string::npos) {
    wait_ms = static_cast<int>(absl::ToInt64Milliseconds(deadline - absl::Now()));
    pollfd conn_poll{conn_fd_, POLLIN, 0};
    if (wait_ms <= 0 || poll(&conn_poll, 1, wait_ms) != 1) return false;
    char chunk[1024];
    ssize_t got = read(conn_fd_, chunk, sizeof(chunk));
    if (got <= 0) return false;
    received.append(chunk, static_cast<size_t>(got));
  }
  return true;
}

RefusingPort::RefusingPort() { fd_ = BindLoopback(/*listen_too=*/false, &port_); }

RefusingPort::~RefusingPort() { close(fd_); }

std::string RefusingPort::base_url() const { return LoopbackUrl(port_); }

}  // namespace registry::consul::testing

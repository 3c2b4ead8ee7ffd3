// SPDX-License-Identifier: Apache-2.0
// integration/hostile/hostile_server.cc
#include "integration/hostile/hostile_server.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <map>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace registry::integration {
namespace {

constexpr size_t kPiece = 64 << 10;    // bytes of body per write (and per chunk)
constexpr size_t kMaxHead = 64 << 10;  // a request head longer than this is not read further
constexpr uint64_t kEndless = std::numeric_limits<uint64_t>::max();

// A bound loopback socket on a free port: listening if `listen_too`.
int BindLoopback(bool listen_too, int* port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      (listen_too && listen(fd, 64) != 0) ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) != 0) {
    close(fd);
    return -1;
  }
  *port = ntohs(addr.sin_port);
  return fd;
}

}  // namespace

struct HostileServer::Connection {
  int fd = -1;
  std::string head;           // the request head so far
  std::string out;            // bytes to write before more of the body is made
  uint64_t body_left = 0;     // body bytes still owed (kEndless: no end)
  bool body_started = false;  // the body's first byte ("[") is made
};

absl::StatusOr<std::unique_ptr<HostileServer>> HostileServer::Start(Behaviour behaviour,
                                                                    uint64_t body_bytes) {
  if (behaviour == Behaviour::kHugeBody && body_bytes < 2) {
    return absl::InvalidArgumentError("a huge body needs at least 2 bytes (\"[]\")");
  }
  int port = 0;
  const int listen_fd = BindLoopback(/*listen_too=*/true, &port);
  if (listen_fd < 0) return absl::InternalError(absl::StrCat("listen: errno ", errno));
  const int stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (stop_fd < 0) {
    close(listen_fd);
    return absl::InternalError(absl::StrCat("eventfd: errno ", errno));
  }
  return std::unique_ptr<HostileServer>(
      new HostileServer(behaviour, body_bytes, listen_fd, stop_fd, port));
}

HostileServer::HostileServer(Behaviour behaviour, uint64_t body_bytes, int listen_fd, int stop_fd,
                             int port)
    : behaviour_(behaviour),
      body_bytes_(body_bytes),
      listen_fd_(listen_fd),
      stop_fd_(stop_fd),
      port_(port),
      thread_([this] { Serve(); }) {}

HostileServer::~HostileServer() {
  const uint64_t one = 1;
  (void)!write(stop_fd_, &one, sizeof(one));
  thread_.join();
  close(listen_fd_);
  close(stop_fd_);
}

std::string HostileServer::address() const { return absl::StrCat("127.0.0.1:", port_); }

void HostileServer::Serve() {
  std::map<int, Connection> connections;
  for (;;) {
    std::vector<pollfd> fds = {{stop_fd_, POLLIN, 0}, {listen_fd_, POLLIN, 0}};
    for (const auto& [fd, connection] : connections) {
      const bool owes = !connection.out.empty() || connection.body_left > 0;
      fds.push_back({fd, static_cast<short>(POLLIN | (owes ? POLLOUT : 0)), 0});
    }
    if (poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) break;
    if (fds[0].revents != 0) break;
    if (fds[1].revents & POLLIN) {
      const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (fd >= 0) connections[fd].fd = fd;
    }
    for (size_t i = 2; i < fds.size(); ++i) {
      Connection& connection = connections[fds[i].fd];
      bool alive = true;
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) alive = ReadFrom(connection);
      if (alive && (fds[i].revents & POLLOUT)) alive = WriteTo(connection);
      if (!alive) {
        close(connection.fd);
        connections.erase(fds[i].fd);
      }
    }
  }
  for (const auto& [fd, connection] : connections) close(fd);
}

bool HostileServer::ReadFrom(Connection& connection) {
  char buffer[16 << 10];
  const ssize_t got = read(connection.fd, buffer, sizeof(buffer));
  if (got == 0) return false;
  if (got < 0) return errno == EAGAIN || errno == EINTR;
  if (connection.head.size() >= kMaxHead) return true;  // a flood of a head: keep draining it
  connection.head.append(buffer, static_cast<size_t>(got));
  if (connection.head.find("\r\n\r\n") == std::string::npos) return true;
  // A whole head: answer it (request bodies, e.g. a txn's, are read and dropped above).
  connection.head.clear();
  requests_.fetch_add(1);
  switch (behaviour_) {
    case Behaviour::kSilent:
      break;
    case Behaviour::kHugeBody:
      connection.out = absl::StrFormat(
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Consul-Index: 7\r\n"
          "X-Consul-KnownLeader: true\r\nContent-Length: %d\r\n\r\n",
          body_bytes_);
      connection.body_left = body_bytes_;
      connection.body_started = false;
      break;
    case Behaviour::kEndlessChunks:
      connection.out =
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Consul-Index: 7\r\n"
          "X-Consul-KnownLeader: true\r\nTransfer-Encoding: chunked\r\n\r\n";
      connection.body_left = kEndless;
      connection.body_started = false;
      break;
  }
  return true;
}

bool HostileServer::WriteTo(Connection& connection) {
  if (connection.out.empty() && connection.body_left > 0) {
    // The next piece of the body: "[" first, "]" last, spaces between.
    const bool endless = connection.body_left == kEndless;
    const size_t size =
        endless ? kPiece : static_cast<size_t>(std::min<uint64_t>(kPiece, connection.body_left));
    std::string piece(size, ' ');
    if (!connection.body_started) piece.front() = '[';
    if (!endless && size == connection.body_left) piece.back() = ']';
    connection.body_started = true;
    if (!endless) connection.body_left -= size;
    connection.out = endless ? absl::StrFormat("%x\r\n%s\r\n", size, piece) : std::move(piece);
    bytes_sent_.fetch_add(size);  // counted when made: at most one piece ahead of the socket
  }
  while (!connection.out.empty()) {
    const ssize_t sent =
        send(connection.fd, connection.out.data(), connection.out.size(), MSG_NOSIGNAL);
    if (sent < 0) return errno == EAGAIN || errno == EINTR;
    connection.out.erase(0, static_cast<size_t>(sent));
  }
  return true;
}

std::string ClosedLoopbackAddress() {
  int port = 0;
  const int fd = BindLoopback(/*listen_too=*/false, &port);
  if (fd >= 0) close(fd);
  return absl::StrCat("127.0.0.1:", port);
}

}  // namespace registry::integration

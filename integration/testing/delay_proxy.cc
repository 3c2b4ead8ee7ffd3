// SPDX-License-Identifier: Apache-2.0
// integration/testing/delay_proxy.cc
#include "integration/testing/delay_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <deque>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace registry::integration {
namespace {

constexpr size_t kChunk = 64 * 1024;

int ConnectLoopback(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

bool SendAll(int fd, const std::string& bytes) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    const ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

// One connection: two directions, each a reader that stamps chunks with the time they are due
// and a writer that passes them on then. The connection owns both sockets; when a direction
// ends, the peer learns it (shutdown for writing); an error ends both.
class DelayProxy::Pipe {
 public:
  Pipe(DelayProxy& proxy, int client_fd, int upstream_fd)
      : proxy_(proxy), fds_{client_fd, upstream_fd} {
    for (int from = 0; from < 2; ++from) {
      threads_.emplace_back([this, from] {
        Read(from);
        ++finished_;
      });
      threads_.emplace_back([this, from] {
        Write(from);
        ++finished_;
      });
    }
  }

  // True once all four threads have returned: destroying it then does not wait.
  bool done() const { return finished_.load() == 4; }
  ~Pipe() {
    Abort();
    for (std::thread& thread : threads_) thread.join();
    close(fds_[0]);
    close(fds_[1]);
  }

  // Wakes every thread of this connection for good.
  void Abort() {
    shutdown(fds_[0], SHUT_RDWR);
    shutdown(fds_[1], SHUT_RDWR);
    absl::MutexLock lock(&mu_);
    aborted_ = true;
  }

 private:
  struct Chunk {
    absl::Time due;
    std::optional<std::string> bytes;  // nullopt: the end of this direction
  };

  void Read(int from) {
    char buffer[kChunk];
    for (;;) {
      const ssize_t n = recv(fds_[from], buffer, sizeof(buffer), 0);
      const absl::Time due = absl::Now() + absl::Nanoseconds(proxy_.delay_ns_.load());
      absl::MutexLock lock(&mu_);
      if (n <= 0) {
        queues_[from].push_back(Chunk{due, std::nullopt});
        return;
      }
      queues_[from].push_back(Chunk{due, std::string(buffer, static_cast<size_t>(n))});
    }
  }

  void Write(int from) {
    const int to = fds_[1 - from];
    for (;;) {
      Chunk chunk;
      {
        absl::MutexLock lock(&mu_);
        auto ready = [this, from]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return aborted_ || !queues_[from].empty();
        };
        mu_.Await(absl::Condition(&ready));
        if (aborted_) return;
        // Holds the chunk until it is due; an abort cuts the wait.
        auto aborted = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return aborted_; };
        if (mu_.AwaitWithDeadline(absl::Condition(&aborted), queues_[from].front().due)) return;
        chunk = std::move(queues_[from].front());
        queues_[from].pop_front();
      }
      if (!chunk.bytes.has_value()) {
        shutdown(to, SHUT_WR);
        return;
      }
      if (!SendAll(to, *chunk.bytes)) {
        Abort();
        return;
      }
    }
  }

  DelayProxy& proxy_;
  const int fds_[2];  // [0] the client's connection, [1] the one to the target
  absl::Mutex mu_;
  bool aborted_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<Chunk> queues_[2] ABSL_GUARDED_BY(mu_);  // by the direction's source
  std::atomic<int> finished_{0};
  std::vector<std::thread> threads_;
};

// Answers the requests of one connection as a Consul server without a leader, until the client
// closes it or the proxy is destroyed. Requests are read whole (headers, then Content-Length
// bytes of body) so that kept-alive connections stay in step.
class DelayProxy::Responder {
 public:
  explicit Responder(int fd) : fd_(fd), thread_([this] { Serve(); }) {}
  ~Responder() {
    shutdown(fd_, SHUT_RDWR);
    thread_.join();
    close(fd_);
  }
  bool done() const { return done_.load(); }

 private:
  void Serve() {
    std::string buffer;
    char chunk[4096];
    for (;;) {
      const size_t end = buffer.find("\r\n\r\n");
      if (end != std::string::npos) {
        const size_t total = end + 4 + BodyLength(buffer.substr(0, end));
        if (buffer.size() >= total) {
          if (!SendAll(fd_, Answer(buffer.substr(0, end)))) break;
          buffer.erase(0, total);
          continue;
        }
      }
      const ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
      if (n <= 0) break;
      buffer.append(chunk, static_cast<size_t>(n));
    }
    done_ = true;
  }

  static size_t BodyLength(const std::string& head) {
    const std::string lower = absl::AsciiStrToLower(head);
    const size_t at = lower.find("\r\ncontent-length:");
    if (at == std::string::npos) return 0;
    size_t length = 0;
    return absl::SimpleAtoi(absl::StripAsciiWhitespace(
                                lower.substr(at + 17, lower.find("\r\n", at + 2) - (at + 17))),
                            &length)
               ? length
               : 0;
  }

  static std::string Answer(const std::string& head) {
    if (absl::StartsWith(head, "GET /v1/status/leader")) {
      return "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n\"\"";
    }
    return "HTTP/1.1 500 Internal Server Error\r\nContent-Type: text/plain; charset=utf-8\r\n"
           "Content-Length: 17\r\n\r\nNo cluster leader";
  }

  const int fd_;
  std::atomic<bool> done_{false};
  std::thread thread_;
};

absl::StatusOr<std::unique_ptr<DelayProxy>> DelayProxy::Start(int target_port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(fd, 128) != 0 || getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) close(fd);
    return absl::InternalError("delay proxy: cannot listen on loopback");
  }
  std::unique_ptr<DelayProxy> proxy(new DelayProxy(fd, ntohs(addr.sin_port), target_port));
  proxy->acceptor_ = std::thread([raw = proxy.get()] { raw->AcceptLoop(); });
  return proxy;
}

DelayProxy::DelayProxy(int listen_fd, int port, int target_port)
    : listen_fd_(listen_fd), port_(port), target_port_(target_port) {}

DelayProxy::~DelayProxy() {
  stopping_ = true;
  shutdown(listen_fd_, SHUT_RDWR);  // wakes accept()
  acceptor_.join();
  close(listen_fd_);
  std::vector<std::unique_ptr<Pipe>> pipes;
  {
    absl::MutexLock lock(&mu_);
    pipes = std::move(pipes_);
  }
  std::vector<std::unique_ptr<Responder>> responders;
  {
    absl::MutexLock lock(&mu_);
    responders = std::move(responders_);
  }
  for (auto& pipe : pipes) pipe->Abort();
  pipes.clear();       // joins
  responders.clear();  // joins
}

std::string DelayProxy::address() const { return absl::StrCat("127.0.0.1:", port_); }

void DelayProxy::set_delay(absl::Duration delay) {
  delay_ns_.store(absl::ToInt64Nanoseconds(delay));
}

absl::Duration DelayProxy::delay() const { return absl::Nanoseconds(delay_ns_.load()); }

void DelayProxy::set_leaderless(bool leaderless) {
  std::vector<std::unique_ptr<Pipe>> cut;
  {
    absl::MutexLock lock(&mu_);
    leaderless_ = leaderless;
    if (leaderless) cut = std::move(pipes_);
  }
  for (auto& pipe : cut) pipe->Abort();
}

void DelayProxy::AcceptLoop() {
  while (!stopping_) {
    const int client = accept(listen_fd_, nullptr, nullptr);
    if (client < 0) continue;  // woken by shutdown (then stopping_) or a transient error
    const int one = 1;
    setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    {
      absl::MutexLock lock(&mu_);
      std::erase_if(responders_, [](const auto& responder) { return responder->done(); });
      if (leaderless_) {
        responders_.push_back(std::make_unique<Responder>(client));
        continue;
      }
    }
    const int upstream = ConnectLoopback(target_port_);
    if (upstream < 0) {
      close(client);  // the target is down: so is the proxied connection
      continue;
    }
    absl::MutexLock lock(&mu_);
    if (leaderless_) {  // turned on while this one connected: it is cut as the others were
      close(client);
      close(upstream);
      continue;
    }
    // Ended connections go now: a long run makes thousands of them.
    std::erase_if(pipes_, [](const std::unique_ptr<Pipe>& pipe) { return pipe->done(); });
    pipes_.push_back(std::make_unique<Pipe>(*this, client, upstream));
  }
}

}  // namespace registry::integration

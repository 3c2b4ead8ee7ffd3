// SPDX-License-Identifier: Apache-2.0
// integration/hostile/hostile_server.h
//
// HostileServer: a misbehaving "Consul" on a free loopback port, for the tests of what the
// plugin does when a server hangs or floods it. It reads each request's head and then, by its
// behaviour, never answers, answers 200 with a body of a given size, or answers 200 with a
// chunked body that never ends. Bodies are spaces inside "[ ]", so that a client which read all
// of one would take it for an empty listing: only a client that bounds what it reads fails.
// ClosedLoopbackAddress() gives a port where nothing listens (connections refused).
//
// Thread safety: one serving thread; bytes_sent() from any thread. The destructor closes every
// socket and joins the thread.
#ifndef INTEGRATION_HOSTILE_HOSTILE_SERVER_H_
#define INTEGRATION_HOSTILE_HOSTILE_SERVER_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace registry::integration {

class HostileServer {
 public:
  enum class Behaviour {
    kSilent,         // accepts, reads, never answers
    kHugeBody,       // 200, Content-Length: body_bytes, sent as fast as the client reads
    kEndlessChunks,  // 200, Transfer-Encoding: chunked, 64 KiB chunks without end
  };
  // Listens on 127.0.0.1 (a free port). `body_bytes` is kHugeBody's body size.
  static absl::StatusOr<std::unique_ptr<HostileServer>> Start(Behaviour behaviour,
                                                              uint64_t body_bytes = 0);
  ~HostileServer();
  HostileServer(const HostileServer&) = delete;
  HostileServer& operator=(const HostileServer&) = delete;

  // "127.0.0.1:PORT".
  std::string address() const;
  // Body bytes written to clients so far (what a client that reads everything would hold).
  uint64_t bytes_sent() const { return bytes_sent_.load(); }
  // Requests whose head arrived.
  int requests() const { return requests_.load(); }

 private:
  struct Connection;
  HostileServer(Behaviour behaviour, uint64_t body_bytes, int listen_fd, int stop_fd, int port);
  void Serve();
  // Reads what arrived on `connection`; false once the peer closed or failed.
  bool ReadFrom(Connection& connection);
  // Writes what `connection` is owed; false once the peer is gone.
  bool WriteTo(Connection& connection);

  const Behaviour behaviour_;
  const uint64_t body_bytes_;
  const int listen_fd_;
  const int stop_fd_;  // an eventfd: the destructor's wake-up
  const int port_;
  std::atomic<uint64_t> bytes_sent_{0};
  std::atomic<int> requests_{0};
  std::thread thread_;  // declared last: starts once the members it uses exist
};

// "127.0.0.1:PORT" where nothing listens: a port that was free a moment ago (bound, then closed).
std::string ClosedLoopbackAddress();

}  // namespace registry::integration

#endif  // INTEGRATION_HOSTILE_HOSTILE_SERVER_H_

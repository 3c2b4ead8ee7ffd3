// SPDX-License-Identifier: Apache-2.0
// integration/testing/delay_proxy.h
//
// DelayProxy: a TCP proxy on a free loopback port that forwards every connection to a target
// address and holds each chunk of bytes, in both directions, for the current delay before
// passing it on (order kept). What `tc netem delay` does to a link, without root: tests put it
// between the code under test and a real Consul server and change the delay while they run.
//
// It can also play a Consul server cut off on the minority side of a partition (set_leaderless):
// such a server is up and answers at once, but knows no leader and can apply nothing.
//
// Thread safety: set_delay() from any thread. Each connection costs four threads (a reader and a
// writer per direction); the destructor closes every socket and joins every thread.
#ifndef INTEGRATION_TESTING_DELAY_PROXY_H_
#define INTEGRATION_TESTING_DELAY_PROXY_H_

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace registry::integration {

class DelayProxy {
 public:
  // Listens on 127.0.0.1 (a free port) and forwards to `target_port` on 127.0.0.1.
  static absl::StatusOr<std::unique_ptr<DelayProxy>> Start(int target_port);
  ~DelayProxy();
  DelayProxy(const DelayProxy&) = delete;
  DelayProxy& operator=(const DelayProxy&) = delete;

  // "127.0.0.1:PORT" to connect to instead of the target.
  std::string address() const;
  // Bytes read from now on are passed on `delay` later (one-way; a round trip costs twice).
  void set_delay(absl::Duration delay);
  absl::Duration delay() const;
  // While on, the proxy forwards nothing: it closes every forwarded connection open now and
  // answers each request of a new one as a server without a leader does, GET /v1/status/leader
  // with 200 `""` and every other request with 500 "No cluster leader". Off: forwards again.
  void set_leaderless(bool leaderless);

 private:
  class Pipe;       // one direction of one connection
  class Responder;  // one connection answered as a leaderless server
  DelayProxy(int listen_fd, int port, int target_port);
  void AcceptLoop();

  const int listen_fd_;
  const int port_;
  const int target_port_;
  std::atomic<int64_t> delay_ns_{0};
  std::atomic<bool> stopping_{false};
  absl::Mutex mu_;
  bool leaderless_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::unique_ptr<Pipe>> pipes_ ABSL_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<Responder>> responders_ ABSL_GUARDED_BY(mu_);
  std::thread acceptor_;
};

}  // namespace registry::integration

#endif  // INTEGRATION_TESTING_DELAY_PROXY_H_

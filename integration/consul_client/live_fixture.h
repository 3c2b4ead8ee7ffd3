// SPDX-License-Identifier: Apache-2.0
// integration/consul_client/live_fixture.h
//
// Fixture of the live client tests: a fresh server per test (the dev server or real Consul, see
// integration/testing/server_test.h), a registry::consul::Client pointed at it with the test's
// token, and helpers to start more servers and clients, to wait on the server's request counters,
// and to run a call on another thread that is cancelled and joined whatever the test's outcome.
#ifndef INTEGRATION_CONSUL_CLIENT_LIVE_FIXTURE_H_
#define INTEGRATION_CONSUL_CLIENT_LIVE_FIXTURE_H_

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "consul/canceller.h"
#include "consul/client.h"
#include "devserver/dev_server.h"
#include "gtest/gtest.h"
#include "integration/testing/eventually.h"
#include "integration/testing/server_test.h"

// Fails the test (and returns) unless `expr` is an OK absl::Status.
#define ASSERT_OK(expr)                             \
  do {                                              \
    const ::absl::Status live_status_ = (expr);     \
    ASSERT_TRUE(live_status_.ok()) << live_status_; \
  } while (false)

#define LIVE_CONCAT_INNER_(a, b) a##b
#define LIVE_CONCAT_(a, b) LIVE_CONCAT_INNER_(a, b)

// Declares `lhs` from an OK absl::StatusOr, or fails the test (and returns).
#define ASSERT_OK_AND_ASSIGN(lhs, expr) \
  LIVE_ASSERT_OK_AND_ASSIGN_IMPL_(LIVE_CONCAT_(live_statusor_, __LINE__), lhs, expr)
#define LIVE_ASSERT_OK_AND_ASSIGN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                    \
  ASSERT_TRUE(statusor.ok()) << statusor.status();           \
  lhs = std::move(statusor).value()

namespace registry::consul::live {

using registry::testing::kPatience;

// Dev server options of these tests: port 0, session_ttl_min 1 s, fault injection on.
devserver::ServerOptions TestServerOptions();

// "http://127.0.0.1:PORT" of `server`.
std::string BaseUrl(const devserver::DevServer& server);

// A loopback port nothing listens on (bound, then closed).
int ClosedPort();

// Polls the server's counter for `endpoint` ("kv.get", ...) until it reaches `count`; false on
// timeout. The dev server counts a request as soon as it has read it, before it blocks.
bool AwaitRequestCount(devserver::DevServer& server, const std::string& endpoint, uint64_t count,
                       absl::Duration timeout = kPatience);

// The server's counter for `endpoint` now.
uint64_t RequestCount(devserver::DevServer& server, const std::string& endpoint);

// A call running on another thread with its own Canceller. Destruction cancels the call and
// waits for it, so a failing test never waits out a long blocking query.
template <typename T>
class AsyncCall {
 public:
  explicit AsyncCall(std::function<T(Canceller*)> call)
      : future_(std::async(std::launch::async, std::move(call), &canceller_)) {}
  ~AsyncCall() {
    canceller_.Cancel();
    if (future_.valid()) future_.wait();
  }
  AsyncCall(const AsyncCall&) = delete;
  AsyncCall& operator=(const AsyncCall&) = delete;

  // True if the call has returned, waiting at most `timeout` for it.
  bool Done(absl::Duration timeout) {
    return future_.wait_for(absl::ToChronoNanoseconds(timeout)) == std::future_status::ready;
  }
  // The call's result (waits for it); call once.
  T Get() { return future_.get(); }
  Canceller& canceller() { return canceller_; }

 private:
  Canceller canceller_;  // declared first: outlives the call
  std::future<T> future_;
};

class LiveClientTest : public registry::testing::ServerTest {
 protected:
  void SetUp() override;

  // Starts another dev server; fails the test (returning null) if it cannot.
  std::unique_ptr<devserver::DevServer> StartServer(devserver::ServerOptions options);
  // A client with `options`; fails the test (returning null) if it cannot be created.
  std::unique_ptr<Client> NewClient(ClientOptions options);

  // Writes `key` = `value` through the client; returns the entry's ModifyIndex (0 on failure,
  // which also fails the test).
  uint64_t Put(const std::string& key, const std::string& value);
  // The entry at `key` as the server holds it now (nullopt when absent or on error).
  std::optional<DirEntry> Lookup(const std::string& key);
  // Creates a session through the client ("" on failure, which also fails the test).
  std::string NewSession(const SessionCreateOptions& options);
  // Options of a session named `name` without TTL and without lock delay.
  static SessionCreateOptions PlainSession(const std::string& name);

  Client& client() { return *client_; }

 private:
  std::unique_ptr<Client> client_;
};

}  // namespace registry::consul::live

#endif  // INTEGRATION_CONSUL_CLIENT_LIVE_FIXTURE_H_

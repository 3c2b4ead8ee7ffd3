// SPDX-License-Identifier: Apache-2.0
// bench/common/bench_server.h
//
// The server a benchmark driver runs against, chosen by its --server flag:
//   dev        a consul-dev-server process on a free port (the default);
//   consul     a real `consul agent -dev` on free ports (the binary from
//              $REGISTRY_TEST_CONSUL_BIN, else the one scripts/get-consul.sh fetched);
//   HOST:PORT  a server already running there (no token; ACLs must allow the driver's keys).
// Only the dev server counts requests (/v1/_dev/stats); RequestCounts() is empty elsewhere.
#ifndef BENCH_COMMON_BENCH_SERVER_H_
#define BENCH_COMMON_BENCH_SERVER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "integration/testing/consul_agent.h"
#include "integration/testing/dev_control.h"

namespace registry::bench {

class BenchServer {
 public:
  // Starts (or names) the server `which` describes; `dev_binary` is consul-dev-server's path.
  static absl::StatusOr<std::unique_ptr<BenchServer>> Start(const std::string& which,
                                                            const std::string& dev_binary);

  const std::string& address() const { return address_; }
  // "dev server", "Consul 1.8.7 (agent -dev)" or "HOST:PORT": for the report.
  const std::string& description() const { return description_; }

  // Requests served so far by endpoint ("kv.get", "txn", ...); empty unless the dev server.
  std::map<std::string, uint64_t> RequestCounts() const;
  // Zeroes the dev server's counters (nothing elsewhere).
  void ResetRequestCounts() const;

 private:
  BenchServer() = default;

  std::string address_;
  std::string description_;
  std::optional<integration::DevServerProcess> dev_;
  std::unique_ptr<integration::ConsulAgent> agent_;
};

}  // namespace registry::bench

#endif  // BENCH_COMMON_BENCH_SERVER_H_

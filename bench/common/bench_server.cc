// SPDX-License-Identifier: Apache-2.0
// bench/common/bench_server.cc
#include "bench/common/bench_server.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace registry::bench {

absl::StatusOr<std::unique_ptr<BenchServer>> BenchServer::Start(const std::string& which,
                                                                const std::string& dev_binary) {
  std::unique_ptr<BenchServer> server(new BenchServer());
  if (which == "dev") {
    absl::StatusOr<integration::DevServerProcess> dev =
        integration::StartDevServer(dev_binary, {"--session-ttl-min=1s"});
    if (!dev.ok()) return dev.status();
    server->address_ = dev->address;
    server->description_ = "dev server";
    server->dev_ = *std::move(dev);
  } else if (which == "consul") {
    const std::string binary = integration::ConsulBinary(CONSUL_BIN);
    absl::StatusOr<std::unique_ptr<integration::ConsulAgent>> agent =
        integration::ConsulAgent::Start({.binary = binary, .acl = false});
    if (!agent.ok()) return agent.status();
    server->address_ = (*agent)->address();
    const integration::RunResult version = integration::RunProcess({binary, "version"});
    server->description_ =
        absl::StrCat(version.out.substr(0, version.out.find('\n')), " (agent -dev)");
    server->agent_ = *std::move(agent);
  } else {
    server->address_ = which;
    server->description_ = which;
  }
  return server;
}

std::map<std::string, uint64_t> BenchServer::RequestCounts() const {
  std::map<std::string, uint64_t> counts;
  if (!dev_.has_value()) return counts;
  absl::StatusOr<integration::HttpReply> reply =
      integration::HttpCall("GET", absl::StrCat("http://", address_, "/v1/_dev/stats"));
  if (!reply.ok() || reply->status != 200) return counts;
  const nlohmann::json stats = nlohmann::json::parse(reply->body, nullptr, false);
  if (!stats.is_object()) return counts;
  for (const auto& [endpoint, count] : stats.items()) {
    if (count.is_number_unsigned()) counts[endpoint] = count.get<uint64_t>();
  }
  return counts;
}

void BenchServer::ResetRequestCounts() const {
  if (dev_.has_value()) (void)integration::DevControl(address_, "/v1/_dev/stats/reset");
}

}  // namespace registry::bench

// SPDX-License-Identifier: Apache-2.0
// integration/testing/server_kind.cc
#include "integration/testing/server_kind.h"

#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"

namespace registry::integration {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

}  // namespace

absl::StatusOr<ServerKind> ServerKindFromEnv() {
  const std::string name = Env("REGISTRY_TEST_SERVER");
  if (name.empty() || name == "dev") return ServerKind::kDevServer;
  if (name == "consul") return ServerKind::kConsul;
  if (name == "consul-acl") return ServerKind::kConsulAcl;
  if (name == "consul-tls") return ServerKind::kConsulTls;
  return absl::InvalidArgumentError(absl::StrCat(
      "REGISTRY_TEST_SERVER=", name, ": expected dev, consul, consul-acl or consul-tls"));
}

absl::string_view ServerKindName(ServerKind kind) {
  switch (kind) {
    case ServerKind::kDevServer:
      return "dev";
    case ServerKind::kConsul:
      return "consul";
    case ServerKind::kConsulAcl:
      return "consul-acl";
    case ServerKind::kConsulTls:
      return "consul-tls";
  }
  return "?";
}

absl::StatusOr<RealConsul> StartRealConsul(ServerKind kind) {
  RealConsul consul;
  consul.https = kind == ServerKind::kConsulTls;
  consul.address = consul.https ? "" : Env("REGISTRY_TEST_CONSUL_ADDR");
  if (!consul.address.empty()) {
    consul.external = true;
    consul.token = consul.admin_token = Env("REGISTRY_TEST_CONSUL_TOKEN");
    return consul;
  }
  absl::StatusOr<std::unique_ptr<ConsulAgent>> agent =
      ConsulAgent::Start({.binary = ConsulBinary(CONSUL_BIN),
                          .acl = kind == ServerKind::kConsulAcl,
                          .tls = consul.https});
  if (!agent.ok()) return agent.status();
  consul.agent = *std::move(agent);
  consul.address = consul.agent->address();
  consul.token = consul.agent->client_token();
  consul.admin_token = consul.agent->master_token();
  return consul;
}

}  // namespace registry::integration

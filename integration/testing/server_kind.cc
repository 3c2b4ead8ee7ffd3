// integration/testing/server_kind.cc
#include "integration/testing/server_kind.h"

#include <cstdlib>

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
  return absl::InvalidArgumentError(
      absl::StrCat("REGISTRY_TEST_SERVER=", name, ": expected dev, consul or consul-acl"));
}

absl::string_view ServerKindName(ServerKind kind) {
  switch (kind) {
    case ServerKind::kDevServer:
      return "dev";
    case ServerKind::kConsul:
      return "consul";
    case ServerKind::kConsulAcl:
      return "consul-acl";
  }
  return "?";
}

std::string ExternalConsulAddress() { return Env("REGISTRY_TEST_CONSUL_ADDR"); }
std::string ExternalConsulToken() { return Env("REGISTRY_TEST_CONSUL_TOKEN"); }

}  // namespace registry::integration

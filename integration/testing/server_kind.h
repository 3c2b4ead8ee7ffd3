// integration/testing/server_kind.h
//
// Which server an integration suite runs against, chosen by $REGISTRY_TEST_SERVER:
//   dev (default)  consul-dev-server (fast, with fault injection);
//   consul         a real `consul agent -dev` (integration/testing/consul_agent.h), the binary
//                  from $REGISTRY_TEST_CONSUL_BIN or the one scripts/get-consul.sh fetched;
//   consul-acl     the same with ACLs on (default deny): the code under test gets a
//                  least-privilege token, the test's own inspection the master token.
// With $REGISTRY_TEST_CONSUL_ADDR set, "consul" and "consul-acl" use that running agent instead
// (token: $REGISTRY_TEST_CONSUL_TOKEN). Suites that share one server between tests keep apart
// by namespace; suites with a fresh server per test first delete every key and session on it:
// point it at a throwaway agent only, and run the tests one at a time.
#ifndef INTEGRATION_TESTING_SERVER_KIND_H_
#define INTEGRATION_TESTING_SERVER_KIND_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace registry::integration {

enum class ServerKind { kDevServer, kConsul, kConsulAcl };

// The kind $REGISTRY_TEST_SERVER names. Errors: InvalidArgument naming an unknown value.
absl::StatusOr<ServerKind> ServerKindFromEnv();
absl::string_view ServerKindName(ServerKind kind);

// $REGISTRY_TEST_CONSUL_ADDR, "" when unset.
std::string ExternalConsulAddress();
// $REGISTRY_TEST_CONSUL_TOKEN, "" when unset.
std::string ExternalConsulToken();

}  // namespace registry::integration

#endif  // INTEGRATION_TESTING_SERVER_KIND_H_

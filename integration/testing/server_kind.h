// SPDX-License-Identifier: Apache-2.0
// integration/testing/server_kind.h
//
// Which server an integration suite runs against, chosen by $REGISTRY_TEST_SERVER:
//   dev (default)  consul-dev-server (fast, with fault injection);
//   consul         a real `consul agent -dev` (integration/testing/consul_agent.h), the binary
//                  from $REGISTRY_TEST_CONSUL_BIN or the one scripts/get-consul.sh fetched;
//   consul-acl     the same with ACLs on (default deny): the code under test gets a
//                  least-privilege token, the test's own inspection the master token;
//   consul-tls     a real agent on https only, requiring a client certificate (certificates
//                  made with openssl for the test: integration/testing/test_pki.h).
// With $REGISTRY_TEST_CONSUL_ADDR set, "consul" and "consul-acl" (not "consul-tls") use that
// running agent instead (token: $REGISTRY_TEST_CONSUL_TOKEN). Suites that share one server between
// tests keep apart by namespace; suites with a fresh server per test first delete every key and
// session on it: point it at a throwaway agent only, and run the tests one at a time.
#ifndef INTEGRATION_TESTING_SERVER_KIND_H_
#define INTEGRATION_TESTING_SERVER_KIND_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "integration/testing/consul_agent.h"

namespace registry::integration {

enum class ServerKind { kDevServer, kConsul, kConsulAcl, kConsulTls };

// The kind $REGISTRY_TEST_SERVER names. Errors: InvalidArgument naming an unknown value.
absl::StatusOr<ServerKind> ServerKindFromEnv();
absl::string_view ServerKindName(ServerKind kind);

// The real Consul of a test of kind kConsul or kConsulAcl: the agent at
// $REGISTRY_TEST_CONSUL_ADDR if set, else one started here (integration/testing/consul_agent.h).
struct RealConsul {
  std::unique_ptr<ConsulAgent> agent;  // null for an external agent
  std::string address;                 // "HOST:PORT"
  std::string token;                   // for the code under test ("" without ACLs)
  std::string admin_token;             // every right, for the test's own arranging
  bool https = false;                  // kConsulTls: https only, with agent->pki()
  bool external = false;
};

// Errors: as ConsulAgent::Start.
absl::StatusOr<RealConsul> StartRealConsul(ServerKind kind);

}  // namespace registry::integration

#endif  // INTEGRATION_TESTING_SERVER_KIND_H_

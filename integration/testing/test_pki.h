// SPDX-License-Identifier: Apache-2.0
// integration/testing/test_pki.h
//
// Certificates for a TLS Consul agent in a test, made with the `openssl` command: a CA, a server
// certificate signed by it (names of the caller's choice), a client certificate signed by it,
// and a second, unrelated CA that trusts nothing the agent shows. EC P-256 keys, valid 2 days.
//
// Thread safety: MakeTestPki may be called concurrently for distinct directories.
#ifndef INTEGRATION_TESTING_TEST_PKI_H_
#define INTEGRATION_TESTING_TEST_PKI_H_

#include <string>

#include "absl/status/statusor.h"

namespace registry::integration {

// The subjectAltName of a server certificate that answers to every way a test reaches it.
inline constexpr char kAllServerNames[] = "DNS:server.dc1.consul,DNS:localhost,IP:127.0.0.1";

struct TestPki {
  std::string ca_file;      // the CA that signed the certificates below
  std::string server_cert;  // for the agent
  std::string server_key;
  std::string client_cert;  // for the code under test (and the test's own calls)
  std::string client_key;
  std::string other_ca_file;  // a CA that signed none of them
};

// Writes the files into `dir` (which must exist); `server_names` is the server certificate's
// subjectAltName ("DNS:a,IP:127.0.0.1"). Errors: Internal with openssl's output when it fails
// or is missing (scripts/install-deps.sh installs it).
absl::StatusOr<TestPki> MakeTestPki(const std::string& dir, const std::string& server_names);

}  // namespace registry::integration

#endif  // INTEGRATION_TESTING_TEST_PKI_H_

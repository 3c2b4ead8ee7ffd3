// SPDX-License-Identifier: Apache-2.0
// integration/testing/test_pki.cc
#include "integration/testing/test_pki.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "integration/testing/subprocess.h"

namespace registry::integration {
namespace {

// One shell script, so a failure shows openssl's own words; `set -e` stops at the first one.
constexpr char kScript[] = R"(set -e
cd "$1"
key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null; }
ca() {
  key "$1.key"
  openssl req -x509 -new -key "$1.key" -out "$1.pem" -days 2 -subj "/CN=$2" 2>&1
}
leaf() {  # name, subject, extensions
  key "$1.key"
  openssl req -new -key "$1.key" -out "$1.csr" -subj "/CN=$2" 2>&1
  printf '%s\n' "$3" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -out "$1.pem" \
    -days 2 -extfile "$1.ext" 2>&1
}
ca ca "registry test CA"
ca other-ca "unrelated test CA"
leaf server server.dc1.consul "subjectAltName=$2
extendedKeyUsage=serverAuth,clientAuth"
leaf client client "extendedKeyUsage=clientAuth"
)";

}  // namespace

absl::StatusOr<TestPki> MakeTestPki(const std::string& dir, const std::string& server_names) {
  absl::StatusOr<std::unique_ptr<Subprocess>> openssl =
      Subprocess::Start({"/bin/sh", "-c", kScript, "sh", dir, server_names});
  if (!openssl.ok()) return openssl.status();
  const std::optional<int> exit_code = (*openssl)->Wait(absl::Now() + absl::Seconds(30));
  if (exit_code != 0) {
    return absl::InternalError(absl::StrCat("making test certificates with openssl in ", dir,
                                            " failed (is openssl installed?): ", (*openssl)->out(),
                                            (*openssl)->err()));
  }
  return TestPki{.ca_file = dir + "/ca.pem",
                 .server_cert = dir + "/server.pem",
                 .server_key = dir + "/server.key",
                 .client_cert = dir + "/client.pem",
                 .client_key = dir + "/client.key",
                 .other_ca_file = dir + "/other-ca.pem"};
}

}  // namespace registry::integration

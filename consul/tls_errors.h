// SPDX-License-Identifier: Apache-2.0
// consul/tls_errors.h
//
// Turns libcurl's TLS failures into words a user can act on ("server certificate not trusted by
// tlsCaFile /etc/ca.pem", "the server refused the TLS handshake; it may require a client
// certificate"), and marks the failures that no retry can cure: a certificate the client rejects
// or the server refuses stays so until someone changes a file.
//
// Thread safety: pure functions.
#ifndef CONSUL_TLS_ERRORS_H_
#define CONSUL_TLS_ERRORS_H_

#include <curl/curl.h>

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace registry::consul {

// The TLS settings a failure is explained with.
struct TlsContext {
  std::string ca_file;       // empty: the system CA store
  bool client_certificate;   // a client certificate was configured
  std::string cert_file;     // the client certificate, when configured
  std::string checked_name;  // the name the server certificate was checked against
};

// For a transfer that failed with `result` and libcurl's message `curl_error`: what is wrong in
// the user's words, or nullopt when the failure is not about certificates (a refused
// connection, a timeout, a handshake cut by the network: worth retrying).
std::optional<std::string> ExplainCertificateFailure(CURLcode result, absl::string_view curl_error,
                                                     const TlsContext& tls);

// An Unavailable status marked "never sent" (IsConnectionError() holds, so another server may be
// tried) and "a certificate problem": retrying the same servers later cannot help.
absl::Status CertificateError(absl::string_view message);

// True for statuses built by CertificateError().
bool IsCertificateError(const absl::Status& status);

}  // namespace registry::consul

#endif  // CONSUL_TLS_ERRORS_H_

// SPDX-License-Identifier: Apache-2.0
#include "consul/tls_errors.h"

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "consul/transport.h"

namespace registry::consul {
namespace {

constexpr absl::string_view kCertificatePayload = "type.registry/consul.CertificateError";

std::string TrustSource(const TlsContext& tls) {
  if (tls.ca_file.empty()) return "the system CA store (set tlsCaFile to the CA that signed it)";
  return absl::StrCat("tlsCaFile ", tls.ca_file);
}

// libcurl's words for a server certificate it rejected.
std::string ExplainPeerFailure(absl::string_view text, const TlsContext& tls) {
  if (absl::StrContains(text, "subject name") || absl::StrContains(text, "host name")) {
    return absl::StrCat("server certificate does not carry the name '", tls.checked_name,
                        "' (set tlsServerName to a name it carries, e.g. server.dc1.consul)");
  }
  if (absl::StrContains(text, "expired")) return "server certificate has expired";
  if (absl::StrContains(text, "not yet valid")) return "server certificate is not yet valid";
  return absl::StrCat("server certificate not trusted by ", TrustSource(tls));
}

// A TLS alert the server sent about our certificate (or its absence): OpenSSL reports it as
// "... alert bad certificate", "... alert certificate required", "... alert unknown ca".
bool IsCertificateAlert(absl::string_view text) {
  const std::string lower = absl::AsciiStrToLower(text);
  if (!absl::StrContains(lower, "alert")) return false;
  return absl::StrContains(lower, "certificate") || absl::StrContains(lower, "unknown ca");
}

}  // namespace

std::optional<std::string> ExplainCertificateFailure(CURLcode result, absl::string_view curl_error,
                                                     const TlsContext& tls) {
  switch (result) {
    case CURLE_PEER_FAILED_VERIFICATION:
      return ExplainPeerFailure(curl_error, tls);
    case CURLE_SSL_CACERT_BADFILE:
      return absl::StrCat("tlsCaFile ", tls.ca_file, " holds no usable PEM certificate");
    case CURLE_SSL_CERTPROBLEM:
      return absl::StrCat("client certificate tlsCertFile ", tls.cert_file,
                          " or its key (tlsKeyFile) cannot be used");
    case CURLE_SSL_CONNECT_ERROR:  // TLS 1.2: the server refuses during the handshake
    case CURLE_RECV_ERROR:         // TLS 1.3: the refusal arrives with the first read
    case CURLE_SEND_ERROR:
      if (!IsCertificateAlert(curl_error)) return std::nullopt;
      if (!tls.client_certificate) {
        return std::string(
            "the server refused the TLS handshake; it may require a client certificate (set "
            "tlsCertFile and tlsKeyFile)");
      }
      return absl::StrCat("the server refused the client certificate tlsCertFile ", tls.cert_file,
                          " (is it signed by a CA the server trusts, and still valid?)");
    default:
      return std::nullopt;
  }
}

absl::Status CertificateError(absl::string_view message) {
  absl::Status status = ConnectionError(message);
  status.SetPayload(kCertificatePayload, absl::Cord("certificate"));
  return status;
}

bool IsCertificateError(const absl::Status& status) {
  return status.GetPayload(kCertificatePayload).has_value();
}

}  // namespace registry::consul

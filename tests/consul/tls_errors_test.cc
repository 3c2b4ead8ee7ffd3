// SPDX-License-Identifier: Apache-2.0
// tests/consul/tls_errors_test.cc
//
// TLS failures in the user's words, and a client that gives up at once on a certificate no
// retry can cure, while still trying every server once.
#include "consul/tls_errors.h"

#include <memory>

#include "absl/time/clock.h"
#include "consul/client.h"
#include "consul/transport.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/consul/mock_transport.h"

namespace registry::consul {
namespace {

using ::registry::consul::testing::MockTransport;
using ::registry::consul::testing::ReadResponse;
using ::testing::_;
using ::testing::HasSubstr;
using ::testing::Optional;
using ::testing::Return;

const TlsContext kNoClientCert = {"/etc/ca.pem", false, "", "127.0.0.1"};
const TlsContext kClientCert = {"/etc/ca.pem", true, "/etc/client.pem", "127.0.0.1"};

TEST(ExplainCertificateFailureTest, UntrustedServerCertificateNamesTheCaFile) {
  EXPECT_THAT(ExplainCertificateFailure(
                  CURLE_PEER_FAILED_VERIFICATION,
                  "SSL certificate problem: unable to get local issuer certificate", kNoClientCert),
              Optional(std::string("server certificate not trusted by tlsCaFile /etc/ca.pem")));
  EXPECT_THAT(ExplainCertificateFailure(CURLE_PEER_FAILED_VERIFICATION, "self signed",
                                        {"", false, "", "h"}),
              Optional(HasSubstr("not trusted by the system CA store (set tlsCaFile")));
}

TEST(ExplainCertificateFailureTest, NameMismatchPointsAtTlsServerName) {
  EXPECT_THAT(ExplainCertificateFailure(
                  CURLE_PEER_FAILED_VERIFICATION,
                  "SSL: no alternative certificate subject name matches target host name "
                  "'127.0.0.1'",
                  kNoClientCert),
              Optional(HasSubstr("does not carry the name '127.0.0.1' (set tlsServerName")));
}

TEST(ExplainCertificateFailureTest, ExpiredServerCertificateSaysSo) {
  EXPECT_THAT(
      ExplainCertificateFailure(CURLE_PEER_FAILED_VERIFICATION,
                                "SSL certificate problem: certificate has expired", kNoClientCert),
      Optional(std::string("server certificate has expired")));
}

TEST(ExplainCertificateFailureTest, ServerRefusalSuggestsAClientCertificateWhenThereIsNone) {
  constexpr char kAlert[] =
      "OpenSSL SSL_read: error:0A000412:SSL routines::sslv3 alert bad "
      "certificate, errno 0";
  EXPECT_THAT(ExplainCertificateFailure(CURLE_RECV_ERROR, kAlert, kNoClientCert),
              Optional(HasSubstr("refused the TLS handshake; it may require a client certificate "
                                 "(set tlsCertFile and tlsKeyFile)")));
  EXPECT_THAT(ExplainCertificateFailure(CURLE_SSL_CONNECT_ERROR, kAlert, kClientCert),
              Optional(HasSubstr("refused the client certificate tlsCertFile /etc/client.pem")));
}

TEST(ExplainCertificateFailureTest, FailuresThatAreNotAboutCertificatesAreLeftAlone) {
  EXPECT_EQ(ExplainCertificateFailure(CURLE_COULDNT_CONNECT, "refused", kNoClientCert),
            std::nullopt);
  EXPECT_EQ(ExplainCertificateFailure(CURLE_RECV_ERROR, "Connection reset by peer", kClientCert),
            std::nullopt);
  EXPECT_EQ(ExplainCertificateFailure(CURLE_SSL_CONNECT_ERROR,
                                      "OpenSSL SSL_connect: SSL_ERROR_SYSCALL", kClientCert),
            std::nullopt);
}

TEST(CertificateErrorTest, IsAConnectionErrorThatNothingWasSent) {
  absl::Status status = CertificateError("https://h:1: server certificate has expired");
  EXPECT_TRUE(IsCertificateError(status));
  EXPECT_TRUE(IsConnectionError(status));
  EXPECT_FALSE(IsUnknownOutcome(status));
  EXPECT_FALSE(IsCertificateError(ConnectionError("refused")));
}

TEST(CertificateErrorTest, ClientTriesEveryServerOnceThenGivesUpAtOnce) {
  auto transport = std::make_shared<MockTransport>();
  auto client = Client::Create(
      {.servers = "https://h1:1,https://h2:2", .request_timeout = absl::Seconds(30)}, transport);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_CALL(*transport, Execute(_, _))
      .Times(2)
      .WillRepeatedly(Return(CertificateError("server certificate not trusted")));
  const absl::Time start = absl::Now();
  absl::Status status = (*client)->KvGet("a").status();
  EXPECT_TRUE(IsCertificateError(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr("server certificate not trusted"));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));  // not request_timeout of back-off rounds
}

TEST(CertificateErrorTest, OneServerWithAGoodCertificateIsEnough) {
  auto transport = std::make_shared<MockTransport>();
  auto client = Client::Create({.servers = "https://h1:1,https://h2:2"}, transport);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_CALL(*transport, Execute(_, _))
      .WillOnce(Return(CertificateError("server certificate has expired")))
      .WillOnce(Return(ReadResponse(404, "", 3)));
  EXPECT_TRUE((*client)->KvGet("a").ok());
}

}  // namespace
}  // namespace registry::consul

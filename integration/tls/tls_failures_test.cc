// SPDX-License-Identifier: Apache-2.0
// integration/tls/tls_failures_test.cc
//
// The Consul client against a real agent on https only with `verify_incoming_https`: a wrong CA,
// a missing client certificate and a name the certificate does not carry each fail at once (not
// after request_timeout of retries) with a message naming the server and the problem; the
// documented ways around them (tlsVerify false, tlsServerName) work.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "consul/client.h"
#include "consul/tls_errors.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/testing/consul_agent.h"

namespace registry::consul {
namespace {

using ::testing::HasSubstr;

// Far above the time a certificate failure may take: a retried one would take all of it.
constexpr absl::Duration kRequestTimeout = absl::Seconds(60);
constexpr absl::Duration kPrompt = absl::Seconds(30);  // wide: a loaded (sanitizer) build

std::unique_ptr<integration::ConsulAgent> StartAgent(const std::string& server_names) {
  absl::StatusOr<std::unique_ptr<integration::ConsulAgent>> agent =
      integration::ConsulAgent::Start({.binary = integration::ConsulBinary(CONSUL_BIN),
                                       .tls = true,
                                       .tls_server_names = server_names});
  EXPECT_TRUE(agent.ok()) << agent.status();
  return agent.ok() ? *std::move(agent) : nullptr;
}

class TlsFailuresTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { agent_ = StartAgent(integration::kAllServerNames).release(); }
  static void TearDownTestSuite() {
    delete agent_;
    agent_ = nullptr;
  }
  void SetUp() override { ASSERT_NE(agent_, nullptr); }

  // Options that work: the agent's CA and the client certificate.
  static ClientOptions Good(const integration::ConsulAgent& agent) {
    return {.servers = agent.base_url(),
            .ca_file = agent.pki().ca_file,
            .cert_file = agent.pki().client_cert,
            .key_file = agent.pki().client_key,
            .request_timeout = kRequestTimeout};
  }

  // A KV read with `options`: its status, and that it took less than kPrompt.
  static absl::Status ReadPromptly(const ClientOptions& options) {
    absl::StatusOr<std::unique_ptr<Client>> client = Client::Create(options);
    if (!client.ok()) return client.status();
    const absl::Time start = absl::Now();
    absl::Status status = (*client)->KvGet("tls-probe").status();
    EXPECT_LT(absl::Now() - start, kPrompt) << status;
    return status;
  }

  static integration::ConsulAgent* agent_;
};

integration::ConsulAgent* TlsFailuresTest::agent_ = nullptr;

TEST_F(TlsFailuresTest, TheRightCaAndClientCertificateWork) {
  absl::StatusOr<std::unique_ptr<Client>> client = Client::Create(Good(*agent_));
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE((*client)->KvPut("tls/k", "v").ok());
  absl::StatusOr<KvGetResult> read = (*client)->KvGet("tls/k");
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_TRUE(read->entry.has_value());
  EXPECT_EQ(read->entry->value, "v");
}

TEST_F(TlsFailuresTest, AWrongCaFailsAtOnceNamingTheServerAndTheCaFile) {
  ClientOptions options = Good(*agent_);
  options.ca_file = agent_->pki().other_ca_file;
  absl::Status status = ReadPromptly(options);
  EXPECT_TRUE(IsCertificateError(status)) << status;
  EXPECT_THAT(status.message(),
              HasSubstr(absl::StrCat(agent_->base_url(),
                                     ": server certificate not trusted by "
                                     "tlsCaFile ",
                                     options.ca_file, " (SSL certificate problem")));
}

TEST_F(TlsFailuresTest, NoClientCertificateIsRefusedSayingOneMayBeRequired) {
  ClientOptions options = Good(*agent_);
  options.cert_file.clear();
  options.key_file.clear();
  absl::Status status = ReadPromptly(options);
  EXPECT_TRUE(IsCertificateError(status)) << status;
  EXPECT_THAT(status.message(),
              HasSubstr(absl::StrCat(agent_->base_url(),
                                     ": the server refused the TLS handshake; it may require a "
                                     "client certificate (set tlsCertFile and tlsKeyFile)")));
}

TEST_F(TlsFailuresTest, AClientCertificateOfAnotherCaIsRefusedNamingIt) {
  ClientOptions options = Good(*agent_);
  // The other CA's own certificate and key stand for a client certificate the agent never trusts.
  options.cert_file = agent_->pki().other_ca_file;
  options.key_file =
      absl::StrCat(options.cert_file.substr(0, options.cert_file.size() - 4), ".key");
  absl::Status status = ReadPromptly(options);
  EXPECT_TRUE(IsCertificateError(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr(absl::StrCat("the server refused the client certificate "
                                                       "tlsCertFile ",
                                                       options.cert_file)));
}

TEST_F(TlsFailuresTest, TlsVerifyOffAcceptsAServerTheCaDoesNotTrust) {
  ClientOptions options = Good(*agent_);
  options.ca_file = agent_->pki().other_ca_file;
  options.verify_tls = false;
  EXPECT_TRUE(ReadPromptly(options).ok());
}

TEST(TlsServerNameTest, ACertificateWithOnlyTheConsulNameNeedsTlsServerName) {
  std::unique_ptr<integration::ConsulAgent> agent = StartAgent("DNS:server.dc1.consul");
  ASSERT_NE(agent, nullptr);
  ClientOptions options = {.servers = agent->base_url(),
                           .ca_file = agent->pki().ca_file,
                           .cert_file = agent->pki().client_cert,
                           .key_file = agent->pki().client_key,
                           .request_timeout = kRequestTimeout};
  absl::StatusOr<std::unique_ptr<Client>> plain = Client::Create(options);
  ASSERT_TRUE(plain.ok()) << plain.status();
  absl::Status status = (*plain)->KvGet("k").status();
  EXPECT_TRUE(IsCertificateError(status)) << status;
  EXPECT_THAT(status.message(), HasSubstr(absl::StrCat(agent->base_url(),
                                                       ": server certificate does not carry the "
                                                       "name '127.0.0.1' (set tlsServerName")));

  options.server_name = "server.dc1.consul";
  absl::StatusOr<std::unique_ptr<Client>> named = Client::Create(options);
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_TRUE((*named)->KvPut("k", "v").ok());
  absl::StatusOr<KvGetResult> read = (*named)->KvGet("k");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->entry->value, "v");
}

}  // namespace
}  // namespace registry::consul

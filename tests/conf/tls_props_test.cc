// SPDX-License-Identifier: Apache-2.0
// tests/conf/tls_props_test.cc
//
// The TLS props: each file readable and not blank, certificate and key together, a server name
// that is a DNS name, and no TLS prop without an https:// server to apply it to.
#include <string>

#include "absl/strings/str_cat.h"
#include "conf/registry_config.h"
#include "gtest/gtest.h"
#include "tests/conf/error_matchers.h"
#include "tests/conf/scoped_temp_dir.h"
#include "tests/conf/yaml_fixture.h"

namespace registry::conf {
namespace {

constexpr char kPem[] = "-----BEGIN CERTIFICATE-----\n";

// A config with an https:// server; the first of `props` lands on line 8, like ClusterYaml's.
absl::StatusOr<RegistryConfig> WithTlsProps(absl::string_view props) {
  return ParseRegistryYaml(ClusterYamlWithOnlyProps(absl::StrCat(
      "namespace: governance_ds\nserver-lists: https://127.0.0.1:8501\n", props, "\n")));
}

TEST(TlsPropsTest, TlsVerifyIsABoolean) {
  EXPECT_FALSE(WithTlsProps("tlsVerify: false")->tls_verify);
  EXPECT_TRUE(WithTlsProps("tlsVerify: TRUE")->tls_verify);
  EXPECT_TRUE(IsInvalid(WithTlsProps("tlsVerify: maybe"),
                        {"tlsVerify: 'maybe' is not a boolean", "(line 8)"}));
}

TEST(TlsPropsTest, TlsCaFileMustBeReadable) {
  ScopedTempDir dir;
  std::string ca = dir.Write("ca.pem", kPem);
  EXPECT_EQ(WithTlsProps(absl::StrCat("tlsCaFile: ", ca))->tls_ca_file, ca);
  EXPECT_TRUE(HasError(WithTlsProps("tlsCaFile: /nonexistent/ca.pem"), absl::StatusCode::kNotFound,
                       {"tlsCaFile: '/nonexistent/ca.pem' cannot be read", "(line 8)"}));
}

TEST(TlsPropsTest, ClientCertificateAndKeyAreKept) {
  ScopedTempDir dir;
  std::string cert = dir.Write("client.pem", kPem);
  std::string key = dir.Write("client.key", "-----BEGIN PRIVATE KEY-----\n");
  absl::StatusOr<RegistryConfig> config =
      WithTlsProps(absl::StrCat("tlsCertFile: ", cert, "\ntlsKeyFile: ", key));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->tls_cert_file, cert);
  EXPECT_EQ(config->tls_key_file, key);
}

TEST(TlsPropsTest, UnreadableOrBlankCertificateOrKeyIsRejectedNamingIt) {
  ScopedTempDir dir;
  std::string cert = dir.Write("client.pem", kPem);
  std::string blank = dir.Write("blank.key", " \n");
  EXPECT_TRUE(HasError(WithTlsProps("tlsCertFile: /nonexistent/c.pem"), absl::StatusCode::kNotFound,
                       {"tlsCertFile: '/nonexistent/c.pem' cannot be read", "(line 8)"}));
  EXPECT_TRUE(HasError(
      WithTlsProps(absl::StrCat("tlsCertFile: ", cert, "\ntlsKeyFile: /nonexistent/k.pem")),
      absl::StatusCode::kNotFound,
      {"tlsKeyFile: '/nonexistent/k.pem' cannot be read", "(line 9)"}));
  EXPECT_TRUE(IsInvalid(WithTlsProps(absl::StrCat("tlsCertFile: ", cert, "\ntlsKeyFile: ", blank)),
                        {"tlsKeyFile: '", "blank.key' is empty", "(line 9)"}));
}

TEST(TlsPropsTest, CertificateWithoutKeyOrKeyWithoutCertificateIsRejected) {
  ScopedTempDir dir;
  std::string pem = dir.Write("client.pem", kPem);
  EXPECT_TRUE(IsInvalid(WithTlsProps(absl::StrCat("tlsCertFile: ", pem)),
                        {"tlsCertFile: set without tlsKeyFile; set both or neither"}));
  EXPECT_TRUE(IsInvalid(WithTlsProps(absl::StrCat("tlsKeyFile: ", pem)),
                        {"tlsKeyFile: set without tlsCertFile; set both or neither"}));
}

TEST(TlsPropsTest, ServerNameMustBeADnsName) {
  EXPECT_EQ(WithTlsProps("tlsServerName: server.dc1.consul")->tls_server_name, "server.dc1.consul");
  for (const char* bad : {"server..consul", "-server.consul", "a_b.consul", "server.consul."}) {
    EXPECT_TRUE(
        IsInvalid(WithTlsProps(absl::StrCat("tlsServerName: ", bad)),
                  {absl::StrCat("tlsServerName: '", bad, "' is not a DNS name"), "(line 8)"}))
        << bad;
  }
}

TEST(TlsPropsTest, TlsPropsWithoutAnHttpsServerAreRejectedNamingTheProp) {
  ScopedTempDir dir;
  std::string pem = dir.Write("ca.pem", kPem);
  for (const std::string& prop :
       {absl::StrCat("tlsCaFile: ", pem), std::string("tlsServerName: server.dc1.consul"),
        std::string("tlsVerify: false"),
        absl::StrCat("tlsCertFile: ", pem, "\ntlsKeyFile: ", pem)}) {
    const std::string key = prop.substr(0, prop.find(':'));
    EXPECT_TRUE(
        IsInvalid(ParseRegistryYaml(ClusterYaml(prop)),
                  {absl::StrCat(key, ": set, but no server in server-lists uses https://")}))
        << prop;
  }
  // tlsVerify's default changes nothing.
  EXPECT_TRUE(ParseRegistryYaml(ClusterYaml("tlsVerify: true")).ok());
}

TEST(TlsPropsTest, AListMixingHttpsAndPlainServersIsRejectedNamingThePlainOne) {
  EXPECT_TRUE(IsInvalid(
      ParseRegistryYaml(
          ClusterYamlWithOnlyProps("namespace: ds\nserver-lists: https://a:8501,b:8500\n")),
      {"server-lists: mixes https:// servers with the plain 'b:8500'", "the ACL token in clear"}));
  EXPECT_TRUE(ParseRegistryYaml(ClusterYamlWithOnlyProps(
                                    "namespace: ds\nserver-lists: https://a:8501,https://b:8501\n"))
                  .ok());
}

TEST(TlsPropsTest, OverridingServerListsToPlainHttpUnderTlsPropsIsRejected) {
  absl::StatusOr<RegistryConfig> config = WithTlsProps("tlsServerName: server.dc1.consul");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_TRUE(IsInvalid(ApplyOverride(&*config, "server-lists", "127.0.0.1:8500"),
                        {"tlsServerName: set, but no server in server-lists uses https://"}));
  EXPECT_EQ(config->servers.front(), "https://127.0.0.1:8501");
}

}  // namespace
}  // namespace registry::conf

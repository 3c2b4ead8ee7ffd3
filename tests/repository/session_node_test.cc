// SPDX-License-Identifier: Apache-2.0
// tests/repository/session_node_test.cc
//
// Which node each instance session is created on (repository/session_node.h), against a strict
// gmock transport: the request sequence for each answer Consul may give.
#include "repository/session_node.h"

#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "consul/client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/consul/mock_transport.h"

namespace registry {
namespace {

using consul::HttpRequest;
using consul::testing::MockTransport;
using consul::testing::Response;
using ::testing::_;
using ::testing::InSequence;
using ::testing::Return;
using ::testing::StrictMock;

MATCHER(IsRegistration, "") {
  const auto body = nlohmann::json::parse(arg.body, nullptr, false);
  return arg.path == "/v1/catalog/register" && body.value("Node", "") == "registry-consul" &&
         body["NodeMeta"].value("external-node", "") == "true";
}
MATCHER_P(IsCreateOnNode, node, "") {
  if (arg.path != "/v1/session/create") return false;
  const auto body = nlohmann::json::parse(arg.body, nullptr, false);
  return body.value("Node", "") == std::string(node);
}

const char kCreated[] = R"({"ID":"5e1d1c0c-0000-4000-8000-000000000001"})";

class SessionNodeTest : public ::testing::Test {
 protected:
  SessionNodeTest() {
    consul::ClientOptions options;
    options.servers = "127.0.0.1:8500";
    client_ = *consul::Client::Create(options, transport_);
  }
  absl::StatusOr<std::string> Create(SessionNode& node) {
    consul::SessionCreateOptions create;
    create.ttl = absl::Seconds(10);
    return node.CreateSession(*client_, create, nullptr);
  }

  std::shared_ptr<StrictMock<MockTransport>> transport_ =
      std::make_shared<StrictMock<MockTransport>>();
  std::unique_ptr<consul::Client> client_;
};

TEST_F(SessionNodeTest, TheNodeIsRegisteredOnceAndEverySessionIsCreatedOnIt) {
  InSequence order;
  EXPECT_CALL(*transport_, Execute(IsRegistration(), _)).WillOnce(Return(Response(200, "true")));
  EXPECT_CALL(*transport_, Execute(IsCreateOnNode("registry-consul"), _))
      .Times(2)
      .WillRepeatedly(Return(Response(200, kCreated)));
  SessionNode node("registry-consul");
  EXPECT_TRUE(Create(node).ok());
  EXPECT_TRUE(Create(node).ok());  // no second registration
}

TEST_F(SessionNodeTest, ATokenThatMayNotRegisterStillCreatesOnANodeAnOperatorRegistered) {
  InSequence order;
  EXPECT_CALL(*transport_, Execute(IsRegistration(), _))
      .WillOnce(Return(Response(403, "Permission denied")));
  EXPECT_CALL(*transport_, Execute(IsCreateOnNode("registry-consul"), _))
      .Times(2)
      .WillRepeatedly(Return(Response(200, kCreated)));
  SessionNode node("registry-consul");
  EXPECT_TRUE(Create(node).ok());
  EXPECT_TRUE(Create(node).ok());  // a refusal settles the registration: not asked again
}

TEST_F(SessionNodeTest, AnUnregisteredNodeFallsBackToTheAgentsNode) {
  InSequence order;
  EXPECT_CALL(*transport_, Execute(IsRegistration(), _))
      .WillOnce(Return(Response(403, "Permission denied")));
  EXPECT_CALL(*transport_, Execute(IsCreateOnNode("registry-consul"), _))
      .WillOnce(Return(Response(500, "Missing node registration")));
  EXPECT_CALL(*transport_, Execute(IsCreateOnNode(""), _))
      .WillOnce(Return(Response(200, kCreated)));
  SessionNode node("registry-consul");
  absl::StatusOr<std::string> id = Create(node);
  ASSERT_TRUE(id.ok()) << id.status();
  EXPECT_EQ(*id, "5e1d1c0c-0000-4000-8000-000000000001");
}

TEST_F(SessionNodeTest, ANodeDeregisteredAfterItsRegistrationIsRegisteredAgain) {
  InSequence order;
  EXPECT_CALL(*transport_, Execute(IsRegistration(), _)).WillOnce(Return(Response(200, "true")));
  EXPECT_CALL(*transport_, Execute(IsCreateOnNode("registry-consul"), _))
      .WillOnce(Return(Response(200, kCreated)));
  // Someone deregisters the node: the next create is refused, the node registered again.
  EXPECT_CALL(*transport_, Execute(IsCreateOnNode("registry-consul"), _))
      .WillOnce(Return(Response(500, "Missing node registration")));
  EXPECT_CALL(*transport_, Execute(IsRegistration(), _)).WillOnce(Return(Response(200, "true")));
  EXPECT_CALL(*transport_, Execute(IsCreateOnNode("registry-consul"), _))
      .Times(2)
      .WillRepeatedly(Return(Response(200, kCreated)));
  SessionNode node("registry-consul");
  EXPECT_TRUE(Create(node).ok());
  EXPECT_TRUE(Create(node).ok());
  EXPECT_TRUE(Create(node).ok());  // registered once more, not at every create
}

TEST_F(SessionNodeTest, AnUnreachableCatalogIsAskedAgainAtTheNextCreate) {
  InSequence order;
  EXPECT_CALL(*transport_, Execute(IsRegistration(), _))
      .WillOnce(Return(Response(429, "Too many requests")));
  EXPECT_CALL(*transport_, Execute(IsCreateOnNode("registry-consul"), _))
      .WillOnce(Return(Response(200, kCreated)));
  EXPECT_CALL(*transport_, Execute(IsRegistration(), _)).WillOnce(Return(Response(200, "true")));
  EXPECT_CALL(*transport_, Execute(IsCreateOnNode("registry-consul"), _))
      .WillOnce(Return(Response(200, kCreated)));
  SessionNode node("registry-consul");
  EXPECT_TRUE(Create(node).ok());
  EXPECT_TRUE(Create(node).ok());
}

TEST_F(SessionNodeTest, AnEmptyNameKeepsConsulsDefaultAndRegistersNothing) {
  EXPECT_CALL(*transport_, Execute(IsCreateOnNode(""), _))
      .WillOnce(Return(Response(200, kCreated)));
  SessionNode node("");
  EXPECT_TRUE(Create(node).ok());
}

}  // namespace
}  // namespace registry

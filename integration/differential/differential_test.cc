// SPDX-License-Identifier: Apache-2.0
// integration/differential/differential_test.cc
//
// The dev server against real Consul: each scenario sends the same requests to both (a fresh
// consul agent -dev and a fresh dev server, both with ACLs on and the same master token) and
// compares every answer after normalization (normalize.h): status, header names exactly as sent
// on the wire, the values that carry meaning, and the body. A step whose answers differ for a
// reason of age (the dev server follows modern Consul) says so in `differs_because` and is
// reported, not compared; devserver/README.md lists every such difference.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "devserver/dev_server.h"
#include "gtest/gtest.h"
#include "integration/differential/normalize.h"
#include "integration/differential/scenarios.h"
#include "integration/testing/consul_agent.h"
#include "integration/testing/dev_control.h"
#include "nlohmann/json.hpp"

namespace registry::differential {
namespace {

// One server's side of a scenario: its address, the values its answers gave, its normalizer.
struct Side {
  Side(std::string address, std::string master_token)
      : address(std::move(address)), master_token(std::move(master_token)) {}

  std::string address;
  std::string master_token;
  std::vector<std::string> sessions;
  std::string last_index;
  Normalizer normalizer;

  std::string Fill(std::string text) const {
    for (size_t i = 0; i < sessions.size(); ++i) {
      text = absl::StrReplaceAll(text, {{absl::StrCat("{s", i + 1, "}"), sessions[i]}});
    }
    return absl::StrReplaceAll(text, {{"{index}", last_index}});
  }

  // Sends `step`; returns its normalized description ("" and a test failure if it failed).
  std::string Send(const Step& step) {
    const std::string token = step.caller == Caller::kMaster      ? master_token
                              : step.caller == Caller::kAnonymous ? ""
                                                                  : "00000000-0000-4000-8000-0000";
    absl::StatusOr<integration::HttpReply> reply =
        integration::HttpCall(step.method, absl::StrCat("http://", address, Fill(step.target)),
                              absl::Seconds(10), Fill(step.body), token);
    EXPECT_TRUE(reply.ok()) << reply.status();
    if (!reply.ok()) return "";
    if (!reply->Header("X-Consul-Index").empty()) last_index = reply->Header("X-Consul-Index");
    if (step.target == "/v1/session/create" && reply->status == 200) {
      sessions.push_back(nlohmann::json::parse(reply->body).value("ID", ""));
    }
    return normalizer.Describe(*reply);
  }
};

class DifferentialTest : public ::testing::TestWithParam<Scenario> {};

TEST_P(DifferentialTest, DevServerAnswersAsConsulDoes) {
  absl::StatusOr<std::unique_ptr<integration::ConsulAgent>> agent = integration::ConsulAgent::Start(
      {.binary = integration::ConsulBinary(CONSUL_BIN), .acl = true});
  ASSERT_TRUE(agent.ok()) << agent.status();
  devserver::ServerOptions options;
  options.session_ttl_min = absl::Seconds(1);
  options.acl_master_token = (*agent)->master_token();
  absl::StatusOr<std::unique_ptr<devserver::DevServer>> dev = devserver::DevServer::Start(options);
  ASSERT_TRUE(dev.ok()) << dev.status();

  Side consul((*agent)->address(), (*agent)->master_token());
  Side devserver((*dev)->address(), (*agent)->master_token());
  int reported = 0;
  for (const Step& step : GetParam().steps) {
    const std::string want = consul.Send(step);
    const std::string got = devserver.Send(step);
    const std::string what =
        absl::StrCat(step.method, " ", step.target, " ", step.body.substr(0, 100));
    if (step.differs_because != nullptr) {
      ++reported;
      std::printf("[ DIFFERS  ] %s: %s\n  consul:\n%s\n  dev server:\n%s\n", what.c_str(),
                  step.differs_because, want.c_str(), got.c_str());
      continue;
    }
    EXPECT_EQ(got, want) << what;
  }
  (*dev)->Stop();
  if (HasFailure()) (*agent)->KeepFilesAndPrintLog();
  RecordProperty("known_differences", reported);
}

INSTANTIATE_TEST_SUITE_P(Scenarios, DifferentialTest, ::testing::ValuesIn(Scenarios()),
                         [](const ::testing::TestParamInfo<Scenario>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace registry::differential

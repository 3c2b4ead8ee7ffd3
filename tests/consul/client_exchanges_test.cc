// SPDX-License-Identifier: Apache-2.0
// tests/consul/client_exchanges_test.cc
//
// An exchange driven outside the client (the watch engine's) gets the client's options and
// server choice, moves the failover on, and reports to the client's reachability listeners.
#include "consul/client_exchanges.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "consul/kv.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/consul/mock_transport.h"

namespace registry::consul {
namespace {

using ::testing::_;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::Pair;

std::unique_ptr<Client> NewClient(ClientOptions options) {
  absl::StatusOr<std::unique_ptr<Client>> client =
      Client::Create(std::move(options), std::make_shared<consul::testing::MockTransport>());
  EXPECT_TRUE(client.ok()) << client.status();
  return client.ok() ? *std::move(client) : nullptr;
}

TEST(ClientExchangesTest, APreparedRequestCarriesTheClientsPartsAndGoesToThePreferredServer) {
  std::unique_ptr<Client> client =
      NewClient({.servers = "h1:1,h2:2", .token = "secret", .datacenter = "dc7"});
  ClientExchanges exchanges(*client);
  absl::StatusOr<HttpRequest> request = exchanges.Prepare(BuildKvListRequest("ns/a", {}));
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(request->server, "http://h1:1");
  EXPECT_THAT(request->params, Contains(Pair("dc", "dc7")));
  ASSERT_NE(request->FindHeader("X-Consul-Token"), nullptr);
  EXPECT_GT(request->timeout, absl::ZeroDuration());
}

TEST(ClientExchangesTest, ARequestThatCouldNotBeBuiltStaysItsError) {
  std::unique_ptr<Client> client = NewClient({.servers = "h1:1"});
  ClientExchanges exchanges(*client);
  absl::StatusOr<HttpRequest> request =
      exchanges.Prepare(absl::InvalidArgumentError("key 'x': bad"));
  EXPECT_EQ(request.status(), absl::InvalidArgumentError("key 'x': bad"));
}

TEST(ClientExchangesTest, AvoidingTheServerMovesThePreferenceOnForCallsAndExchanges) {
  std::unique_ptr<Client> client = NewClient({.servers = "h1:1,h2:2"});
  ClientExchanges exchanges(*client);
  exchanges.AvoidServer("http://h2:2");  // not preferred: ignored
  EXPECT_EQ(client->PreferredServer(), "http://h1:1");
  exchanges.AvoidServer("http://h1:1");
  EXPECT_EQ(client->PreferredServer(), "http://h2:2");
  EXPECT_EQ(exchanges.Prepare(BuildKvGetRequest("ns/a", {}))->server, "http://h2:2");
}

TEST(ClientExchangesTest, EveryReachabilityListenerHearsACompletedExchangeUntilRemoved) {
  std::unique_ptr<Client> client = NewClient({.servers = "h1:1"});
  ClientExchanges exchanges(*client);
  std::vector<bool> first;
  std::vector<bool> second;
  const int first_id = client->AddReachabilityListener([&](bool up) { first.push_back(up); });
  client->AddReachabilityListener([&](bool up) { second.push_back(up); });
  absl::StatusOr<HttpRequest> request = exchanges.Prepare(BuildKvGetRequest("ns/a", {}));
  ASSERT_TRUE(request.ok());
  const absl::StatusOr<HttpResponse> no_answer = absl::UnavailableError("connection refused");
  exchanges.Complete(*request, no_answer, no_answer.status(), absl::Milliseconds(3));
  client->RemoveReachabilityListener(first_id);
  exchanges.Complete(*request, HttpResponse{200, {}, "[]"}, absl::OkStatus(),
                     absl::Milliseconds(3));
  // An outcome that says nothing of the store (the caller cancelled) is not reported.
  exchanges.Complete(*request, absl::CancelledError("closed"), absl::CancelledError("closed"),
                     absl::Milliseconds(3));
  EXPECT_THAT(first, ElementsAre(false));
  EXPECT_THAT(second, ElementsAre(false, true));
}

TEST(ClientExchangesTest, ListingNowIsAClientCallWithItsFailover) {
  auto transport = std::make_shared<consul::testing::MockTransport>();
  std::unique_ptr<Client> client = *Client::Create({.servers = "h1:1,h2:2"}, transport);
  ClientExchanges exchanges(*client);
  std::vector<std::string> servers;
  EXPECT_CALL(*transport, Execute(_, _))
      .WillRepeatedly([&](const HttpRequest& request, Canceller*) -> absl::StatusOr<HttpResponse> {
        servers.push_back(request.server);
        if (request.server == "http://h1:1") return absl::UnavailableError("connection refused");
        EXPECT_EQ(request.path, "/v1/kv/ns/a");
        return consul::testing::ReadResponse(
            200, R"([{"Key":"ns/a/x","Value":"dg==","Flags":0,"CreateIndex":4,"ModifyIndex":4}])",
            4);
      });
  absl::StatusOr<KvListResult> listing = exchanges.ListNow("ns/a", nullptr);
  ASSERT_TRUE(listing.ok()) << listing.status();
  ASSERT_EQ(listing->entries.size(), 1u);
  EXPECT_EQ(listing->entries[0].key, "ns/a/x");
  EXPECT_THAT(servers, ElementsAre("http://h1:1", "http://h2:2"));
}

}  // namespace
}  // namespace registry::consul

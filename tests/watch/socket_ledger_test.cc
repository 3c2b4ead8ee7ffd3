// SPDX-License-Identifier: Apache-2.0
// SocketLedger: an epoll registration is taken out only while its socket is still the one open
// under that number (libcurl may report a socket unused after closing it).
#include "watch/socket_ledger.h"

#include "gtest/gtest.h"

namespace registry::watch::internal {
namespace {

constexpr curl_socket_t kSocket = 7;

TEST(SocketLedgerTest, AnOpenSocketIsUnregisteredUnderItsToken) {
  SocketLedger ledger;
  ledger.Opened(kSocket);
  EXPECT_TRUE(ledger.ShouldUnregister(kSocket, ledger.TokenFor(kSocket)));
}

TEST(SocketLedgerTest, ASocketClosedBeforeItIsReportedUnusedIsLeftAlone) {
  SocketLedger ledger;
  ledger.Opened(kSocket);
  const SocketLedger::Token token = ledger.TokenFor(kSocket);
  ledger.Closed(kSocket);  // its number may be another thread's socket by now
  EXPECT_FALSE(ledger.ShouldUnregister(kSocket, token));
}

TEST(SocketLedgerTest, AReusedNumberKeepsTheNewSocketsRegistration) {
  SocketLedger ledger;
  ledger.Opened(kSocket);
  const SocketLedger::Token old_token = ledger.TokenFor(kSocket);
  ledger.Closed(kSocket);
  ledger.Opened(kSocket);  // a new query's connection got the same number
  const SocketLedger::Token new_token = ledger.TokenFor(kSocket);

  EXPECT_NE(old_token, new_token);
  EXPECT_FALSE(ledger.ShouldUnregister(kSocket, old_token));
  EXPECT_TRUE(ledger.ShouldUnregister(kSocket, new_token));
}

TEST(SocketLedgerTest, ASocketLibcurlOpenedItselfIsAlwaysUnregistered) {
  SocketLedger ledger;
  const SocketLedger::Token token = ledger.TokenFor(kSocket);
  EXPECT_NE(token, nullptr);
  EXPECT_TRUE(ledger.ShouldUnregister(kSocket, token));
}

TEST(SocketLedgerTest, ANeverRegisteredSocketIsLeftAlone) {
  SocketLedger ledger;
  ledger.Opened(kSocket);
  EXPECT_FALSE(ledger.ShouldUnregister(kSocket, nullptr));
}

TEST(SocketLedgerTest, SerialsFollowTheOrderOfOpeningAndForgetClosedSockets) {
  SocketLedger ledger;
  const uint64_t first = ledger.Opened(9);
  const uint64_t second = ledger.Opened(kSocket);
  EXPECT_LT(first, second);
  EXPECT_EQ(ledger.SerialOf(9), first);
  ledger.Closed(9);
  EXPECT_EQ(ledger.SerialOf(9), 0u);
  EXPECT_EQ(ledger.SerialOf(kSocket), second);
}

}  // namespace
}  // namespace registry::watch::internal

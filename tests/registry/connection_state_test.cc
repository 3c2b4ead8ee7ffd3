// SPDX-License-Identifier: Apache-2.0
// tests/registry/connection_state_test.cc
#include "gtest/gtest.h"
#include "registry/repository.h"

namespace registry {
namespace {

TEST(ConnectionStateNameTest, NamesEveryState) {
  EXPECT_STREQ(ConnectionStateName(ConnectionState::kConnected), "CONNECTED");
  EXPECT_STREQ(ConnectionStateName(ConnectionState::kSuspended), "SUSPENDED");
  EXPECT_STREQ(ConnectionStateName(ConnectionState::kLost), "LOST");
  EXPECT_STREQ(ConnectionStateName(ConnectionState::kReconnected), "RECONNECTED");
}

}  // namespace
}  // namespace registry

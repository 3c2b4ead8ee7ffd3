// SPDX-License-Identifier: Apache-2.0
// integration/hostile/hostile_testing.h
//
// The one way the hostile tests start a HostileServer: a failure to start fails the test.
#ifndef INTEGRATION_HOSTILE_HOSTILE_TESTING_H_
#define INTEGRATION_HOSTILE_HOSTILE_TESTING_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "integration/hostile/hostile_server.h"

namespace registry::integration {

// HostileServer::Start(behaviour, body_bytes), or null (the test failed) if it could not start.
inline std::unique_ptr<HostileServer> StartServer(HostileServer::Behaviour behaviour,
                                                  uint64_t body_bytes = 0) {
  absl::StatusOr<std::unique_ptr<HostileServer>> server =
      HostileServer::Start(behaviour, body_bytes);
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

}  // namespace registry::integration

#endif  // INTEGRATION_HOSTILE_HOSTILE_TESTING_H_

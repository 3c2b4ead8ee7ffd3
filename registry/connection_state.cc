// SPDX-License-Identifier: Apache-2.0
// registry/connection_state.cc
#include "registry/repository.h"

namespace registry {

const char* ConnectionStateName(ConnectionState state) {
  switch (state) {
    case ConnectionState::kConnected:
      return "CONNECTED";
    case ConnectionState::kSuspended:
      return "SUSPENDED";
    case ConnectionState::kLost:
      return "LOST";
    case ConnectionState::kReconnected:
      return "RECONNECTED";
  }
  return "UNKNOWN";
}

}  // namespace registry

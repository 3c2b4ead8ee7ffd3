// SPDX-License-Identifier: Apache-2.0
#include "watch/socket_ledger.h"

#include <cstdint>

namespace registry::watch::internal {
namespace {

// Serial 0 stands for "not opened by the loop"; tokens are serial + 1 so that none is null
// (libcurl passes null for a socket that has no registration yet).
SocketLedger::Token TokenOfSerial(uint64_t serial) {
  return reinterpret_cast<SocketLedger::Token>(static_cast<uintptr_t>(serial + 1));
}

uint64_t SerialOfToken(SocketLedger::Token token) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(token)) - 1;
}

}  // namespace

uint64_t SocketLedger::Opened(curl_socket_t socket) {
  open_[socket] = ++last_serial_;
  return last_serial_;
}

void SocketLedger::Closed(curl_socket_t socket) { open_.erase(socket); }

uint64_t SocketLedger::SerialOf(curl_socket_t socket) const {
  auto it = open_.find(socket);
  return it == open_.end() ? 0 : it->second;
}

SocketLedger::Token SocketLedger::TokenFor(curl_socket_t socket) const {
  return TokenOfSerial(SerialOf(socket));
}

bool SocketLedger::ShouldUnregister(curl_socket_t socket, Token token) const {
  if (token == nullptr) return false;  // never registered
  const uint64_t registered = SerialOfToken(token);
  if (registered == 0) return true;  // libcurl's own socket, still open when it reports it
  return SerialOf(socket) == registered;
}

}  // namespace registry::watch::internal

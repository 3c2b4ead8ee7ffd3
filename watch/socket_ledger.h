// SPDX-License-Identifier: Apache-2.0
// watch/socket_ledger.h
//
// Internal to the watch engine: which descriptors libcurl was given by the IO loop, and whether
// a descriptor registered in the loop's epoll set is still that same socket. Pure bookkeeping
// (no system call), so the rule is unit tested on its own (tests/watch/socket_ledger_test.cc).
//
// Why: libcurl may report a socket as no longer used (CURL_POLL_REMOVE) after it has closed it,
// for instance when a handle is removed from the multi handle after its connection was closed.
// By then the descriptor number may belong to another socket: one of this process's other
// threads (an accepted connection of an in-process server), or a new query's connection of the
// loop itself. Removing "that number" from the epoll set would then act on a file the loop does
// not own, or take a live query's socket out of the set (the query would hang until its timeout).
// The kernel drops a closed socket from every epoll set by itself, so a socket closed since it
// was registered needs no removal at all.
//
// Invariant: ShouldUnregister(fd, token) is true only if `fd` is still open as the very socket
// that was registered under `token`. Every socket the loop opens gets a new serial (Opened), its
// registration carries that serial (TokenFor), and closing it (Closed, from libcurl's close-socket
// callback, before the descriptor is released) forgets it, so a reused number never matches an
// old token.
//
// Thread safety: none; owned by the IO thread.
#ifndef WATCH_SOCKET_LEDGER_H_
#define WATCH_SOCKET_LEDGER_H_

#include <curl/curl.h>

#include <cstdint>

#include "absl/container/flat_hash_map.h"

namespace registry::watch::internal {

class SocketLedger {
 public:
  // What an epoll registration remembers of its socket (given to curl_multi_assign): the
  // socket's serial, or kForeign for a socket libcurl opened itself. Never null.
  using Token = void*;

  // `socket` was just opened by the loop (CURLOPT_OPENSOCKETFUNCTION); returns its serial,
  // larger than every earlier one.
  uint64_t Opened(curl_socket_t socket);
  // `socket` is about to be closed (CURLOPT_CLOSESOCKETFUNCTION).
  void Closed(curl_socket_t socket);

  // The serial of the open socket `socket`; 0 if the loop did not open it or it is closed.
  uint64_t SerialOf(curl_socket_t socket) const;

  // The token to register `socket` under, now.
  Token TokenFor(curl_socket_t socket) const;
  // Whether libcurl's "no longer used" for `socket`, registered under `token`, must take it out
  // of the epoll set (see the invariant above). A socket libcurl opened itself (its resolver's
  // wake-up pair) is closed by libcurl only after it reports it, so it is always taken out.
  bool ShouldUnregister(curl_socket_t socket, Token token) const;

 private:
  absl::flat_hash_map<curl_socket_t, uint64_t> open_;  // socket -> serial, while open
  uint64_t last_serial_ = 0;
};

}  // namespace registry::watch::internal

#endif  // WATCH_SOCKET_LEDGER_H_

// SPDX-License-Identifier: Apache-2.0
// consul/curl_transport.h
//
// CurlTransport is the libcurl Transport. Each in-flight request borrows a slot (an easy handle
// driven by its own multi handle) from a pool and returns it afterwards; the multi handle keeps
// the slot's connection cache, so sequential requests reuse keep-alive connections. No lock is
// held during I/O, so any number of threads may run requests at once (one slot each). Requests
// are set up and their results mapped by CurlExchange (curl_exchange.h).
//
// Cancellation: the slot's poll loop (curl_multi_poll) is woken by curl_multi_wakeup from
// Canceller::Cancel(), so a blocked request returns Cancelled within milliseconds; its
// connection is closed (it is mid-response and cannot be reused).
//
// Nothing is logged; header values (the ACL token) never appear in errors.
//
// Thread safety: Execute() may be called concurrently from any thread. The transport must
// outlive every Execute() call (destroying it while a request runs is undefined).
#ifndef CONSUL_CURL_TRANSPORT_H_
#define CONSUL_CURL_TRANSPORT_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "consul/curl_exchange.h"
#include "consul/transport.h"

namespace registry::consul {

class CurlTransport : public Transport {
 public:
  // `max_idle_slots`: idle slots (and their open connections) kept for reuse.
  explicit CurlTransport(CurlOptions options, size_t max_idle_slots = 16);
  ~CurlTransport() override;
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  // See Transport::Execute and CurlExchange for the error mapping. Additionally
  // ResourceExhausted if libcurl cannot allocate a handle.
  absl::StatusOr<HttpResponse> Execute(const HttpRequest& request, Canceller* canceller) override;

 private:
  struct Slot;

  // Takes an idle slot or makes a new one (nullptr if libcurl fails to allocate).
  std::unique_ptr<Slot> TakeSlot();
  // Keeps `slot` for reuse unless max_idle_slots_ are already idle.
  void ReturnSlot(std::unique_ptr<Slot> slot);

  const CurlOptions options_;
  const size_t max_idle_slots_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<Slot>> idle_ ABSL_GUARDED_BY(mu_);
};

}  // namespace registry::consul

#endif  // CONSUL_CURL_TRANSPORT_H_

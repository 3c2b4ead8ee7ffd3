// SPDX-License-Identifier: Apache-2.0
// devserver/faults.h
//
// FaultInjector holds the failure modes tests switch on (added latency, failing requests,
// dropped connections); RequestStats counts requests per endpoint for benchmarks. Both are
// shared by the HTTP layer and DevServer's C++ controls.
//
// Thread safety: both classes may be used concurrently from any thread.
#ifndef DEVSERVER_FAULTS_H_
#define DEVSERVER_FAULTS_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace registry::devserver {

class FaultInjector {
 public:
  // Every later API request (not /v1/_dev/) waits `latency` before it is handled; zero clears.
  void SetLatency(absl::Duration latency);
  absl::Duration latency() const;

  // The next `count` KV, session and txn requests fail with 500 "No cluster leader".
  void FailNextRequests(int count);
  // Consumes one pending failure; true if this request must fail.
  bool ConsumeFailure();

  // The next `count` API requests have their connection closed without any reply.
  void DropNextConnections(int count);
  // Consumes one pending drop; true if this request's connection must be dropped.
  bool ConsumeDrop();

  // The next `count` API requests with method `method` ("" for any) and a path starting with
  // `path_prefix` ("" for any) are handled (a write is applied) and then their connection is
  // closed instead of the reply: a server dying between applying a write and answering it. The
  // filter lets a test aim at one write while other requests (reads, renewals) go on.
  void DropNextReplies(int count, std::string path_prefix = "", std::string method = "");
  // As DropNextReplies, but the reply is replaced by Consul's 500 "leadership lost while
  // committing log": the leader stepped down with the write in flight, which the next leader may
  // commit. Here it is applied; the client is told 500.
  void FailNextRepliesAfterApplying(int count, std::string path_prefix = "",
                                    std::string method = "");
  enum class ReplyFault { kNone, kDrop, kServerError };
  // Consumes one pending reply fault matching the request and says which it is.
  ReplyFault ConsumeReplyFault(absl::string_view method, absl::string_view path);

  // Clears latency and every pending failure, drop and reply drop.
  void Clear();

 private:
  mutable absl::Mutex mu_;
  absl::Duration latency_ ABSL_GUARDED_BY(mu_) = absl::ZeroDuration();
  int failures_left_ ABSL_GUARDED_BY(mu_) = 0;
  int drops_left_ ABSL_GUARDED_BY(mu_) = 0;
  int reply_drops_left_ ABSL_GUARDED_BY(mu_) = 0;
  ReplyFault reply_fault_ ABSL_GUARDED_BY(mu_) = ReplyFault::kDrop;
  std::string reply_drop_prefix_ ABSL_GUARDED_BY(mu_);
  std::string reply_drop_method_ ABSL_GUARDED_BY(mu_);
};

class RequestStats {
 public:
  // Counts one request to `endpoint` ("kv.get", "session.create", ...).
  void Count(absl::string_view endpoint);
  // A copy of every counter, sorted by endpoint name.
  std::map<std::string, uint64_t> Snapshot() const;
  // Sets every counter back to zero (forgets them).
  void Reset();

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, uint64_t, std::less<>> counts_ ABSL_GUARDED_BY(mu_);
};

}  // namespace registry::devserver

#endif  // DEVSERVER_FAULTS_H_

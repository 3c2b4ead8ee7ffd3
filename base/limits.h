// SPDX-License-Identifier: Apache-2.0
// base/limits.h
//
// The defaults and limits of the repository's time settings, in one place. The YAML parser
// (conf/), the Consul repository (repository/), the client (consul/) and the watch engine
// (watch/) take their defaults and limits from here; conf/ and the repository check values with
// ValidateTimings(), each naming the settings its own way (a YAML prop, a C++ field), so that a
// config conf/ accepts is one the repository accepts.
//
// Thread safety: constants and a pure function.
#ifndef BASE_LIMITS_H_
#define BASE_LIMITS_H_

#include <cstddef>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace registry::limits {

// The instance session's TTL. Consul's server-side minimum (session_ttl_min, 10 s by default)
// applies too; the low bound here lets a development agent configured below that be used.
inline constexpr absl::Duration kDefaultSessionTtl = absl::Seconds(30);
inline constexpr absl::Duration kMaxSessionTtl = absl::Hours(24);
// The server-side wait of a blocking query; Consul caps it at 10 minutes.
inline constexpr absl::Duration kDefaultBlockQueryWait = absl::Seconds(60);
inline constexpr absl::Duration kMaxBlockQueryWait = absl::Minutes(10);
// Connecting, and a whole non-blocking call with its retries (consul/client.h).
inline constexpr absl::Duration kDefaultConnectTimeout = absl::Seconds(5);
inline constexpr absl::Duration kDefaultRequestTimeout = absl::Seconds(10);
inline constexpr absl::Duration kMaxTimeout = absl::Hours(24);
// The catalog node the instance sessions belong to (repository/session_node.h).
inline constexpr absl::string_view kDefaultSessionNode = "registry-consul";
// The instance session's lock-delay; 0 disables it, Consul refuses more than 60 s.
inline constexpr absl::Duration kDefaultLockDelay = absl::Seconds(15);
inline constexpr absl::Duration kMaxLockDelay = absl::Seconds(60);
// The pause between attempts refused by a lock-delay: at most kMaxLockRetry and at most the
// session TTL (a longer pause would outlast the session it waits for).
inline constexpr absl::Duration kDefaultLockRetry = absl::Milliseconds(500);
inline constexpr absl::Duration kMaxLockRetry = absl::Seconds(60);

// Operations per store transaction: Consul up to 1.13 accepts 64, later versions 128. A key of
// a persist batch takes one.
inline constexpr int kDefaultTxnOperations = 64;
inline constexpr int kMinTxnOperations = 1;
inline constexpr int kMaxTxnOperations = 128;

// Blocking queries (so connections) one watch of a big tree may hold. Consul serves at most 200
// connections per client address by default (limits.http_max_conns_per_client), shared by every
// watch, lock and request of the process; 1 never splits a watch.
inline constexpr int kDefaultWatchQueries = 32;
inline constexpr int kMaxWatchQueries = 180;

// Consul's KV value limit (kv_max_value_size, 512 KiB by default): the plugin refuses larger
// values before sending them, and registryctl reads no more than this of a value on stdin.
inline constexpr size_t kMaxValueBytes = 524288;

// The most one answer of a Consul server may hold (status line, headers and body): a larger one
// fails its request (ResourceExhausted) instead of growing the process's memory with it. A
// value is at most 512 KiB in Consul; the largest answers are listings of a whole tree, which
// the repository has to hold anyway.
inline constexpr size_t kDefaultMaxResponseBytes = size_t{128} << 20;
inline constexpr size_t kMinResponseBytes = size_t{1} << 20;

struct Timings {
  absl::Duration session_ttl = kDefaultSessionTtl;
  absl::Duration block_query_wait = kDefaultBlockQueryWait;
  absl::Duration connect_timeout = kDefaultConnectTimeout;
  absl::Duration request_timeout = kDefaultRequestTimeout;
  absl::Duration session_lock_delay = kDefaultLockDelay;
  absl::Duration lock_retry = kDefaultLockRetry;
};

// How a caller names each setting in its errors ("timeToLiveSeconds", "session_ttl").
struct TimingNames {
  absl::string_view session_ttl;
  absl::string_view block_query_wait;
  absl::string_view connect_timeout;
  absl::string_view request_timeout;
  absl::string_view session_lock_delay;
  absl::string_view lock_retry;
};

// Checks every range above and that lock_retry is at most session_ttl. InvalidArgument
// "<name>: <value> must be ..." naming the first setting at fault as `names` spells it.
absl::Status ValidateTimings(const Timings& timings, const TimingNames& names);

// Checks a session node name: empty (the agent's node) or at most 63 letters, digits, '-', '_'
// and '.' (a DNS label; Consul warns about node names DNS cannot carry). InvalidArgument quotes
// the name and says what is wrong with it.
absl::Status ValidateNodeName(absl::string_view name);

}  // namespace registry::limits

#endif  // BASE_LIMITS_H_

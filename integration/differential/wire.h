// integration/differential/wire.h
//
// One HTTP exchange as it happened on the wire: the status, every header with its name exactly
// as the server spelled it, in order, and the body. For comparing two servers byte for byte
// where a client library would hide the difference (header-name case, redirects, dot segments).
//
// Thread safety: pure function, any thread.
#ifndef INTEGRATION_DIFFERENTIAL_WIRE_H_
#define INTEGRATION_DIFFERENTIAL_WIRE_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace registry::differential {

struct WireReply {
  long status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // as sent, in order
  std::string body;

  // The value of the first header named `name` (compared exactly), or "".
  std::string Header(const std::string& name) const;
};

// Sends `method` `target` (path and query, sent as written: no dot-segment removal, no redirect
// following) to http://`address` with `body`, and `token` as X-Consul-Token when not empty.
// Errors: Unavailable naming the target when no reply came within 10 s.
absl::StatusOr<WireReply> SendOnWire(const std::string& address, const std::string& method,
                                     const std::string& target, const std::string& body,
                                     const std::string& token);

}  // namespace registry::differential

#endif  // INTEGRATION_DIFFERENTIAL_WIRE_H_

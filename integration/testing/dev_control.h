// SPDX-License-Identifier: Apache-2.0
// integration/testing/dev_control.h
//
// A consul-dev-server process for multi-process tests, and plain HTTP calls to it (libcurl): the
// /v1/_dev/ fault controls (devserver/README.md) and raw KV reads.
//
// Thread safety: every function may be called concurrently.
#ifndef INTEGRATION_TESTING_DEV_CONTROL_H_
#define INTEGRATION_TESTING_DEV_CONTROL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "integration/testing/subprocess.h"

namespace registry::integration {

// A dev server started by StartDevServer: the process (killed when destroyed) and its address.
struct DevServerProcess {
  std::unique_ptr<Subprocess> process;
  std::string address;  // "127.0.0.1:PORT"
};

// Starts `binary` on a free loopback port with `extra_args` and waits (at most 10 s) for the
// line announcing its address. Errors: Internal naming the binary and its stderr.
absl::StatusOr<DevServerProcess> StartDevServer(const std::string& binary,
                                                const std::vector<std::string>& extra_args);

struct HttpReply {
  long status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names as sent, in order
  std::string body;

  // The value of the first header named exactly `name`, or "".
  std::string Header(absl::string_view name) const;
};

// Sends `method` `url` as written (no dot-segment removal, no redirect following) with `body`,
// and `token` as X-Consul-Token when not empty. Errors: Unavailable naming the URL when no answer
// came within `timeout`.
absl::StatusOr<HttpReply> HttpCall(absl::string_view method, const std::string& url,
                                   absl::Duration timeout = absl::Seconds(5),
                                   const std::string& body = "", const std::string& token = "");

// The certificates of an https:// HttpCall: the CA to trust and a client certificate (PEM).
struct HttpTls {
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  bool verify_name = true;  // false: trust the CA's certificate whatever name it carries
};

// HttpCall to an https:// `url` with `tls`.
absl::StatusOr<HttpReply> HttpCall(absl::string_view method, const std::string& url,
                                   absl::Duration timeout, const std::string& body,
                                   const std::string& token, const HttpTls& tls);

// PUT http://<address><path> expecting 200. Errors: as HttpCall, or Internal with the reply.
absl::Status DevControl(const std::string& address, absl::string_view path);

// The session holding Consul key `consul_key` (e.g. "ns/lock/name/"), "" if the key is absent or
// not held; read with `token` when not empty. Errors: as HttpCall, or Internal for an unexpected
// reply.
absl::StatusOr<std::string> KeySession(const std::string& address, absl::string_view consul_key,
                                       const std::string& token = "");

// A key as a recursive listing shows it.
struct ListedKey {
  std::string key;
  std::string session;  // "" when not held
  uint64_t create_index = 0;
};

// The keys under Consul prefix `prefix` (GET ?recurse; none if absent), in the order Consul
// created them; read with `token` when not empty. Errors: as KeySession.
absl::StatusOr<std::vector<ListedKey>> ListPrefix(const std::string& address,
                                                  absl::string_view prefix,
                                                  const std::string& token = "");

}  // namespace registry::integration

#endif  // INTEGRATION_TESTING_DEV_CONTROL_H_

// SPDX-License-Identifier: Apache-2.0
// devserver/store_types.h
//
// Plain value types shared by the dev server's store (store.h) and its HTTP API (api.h): the
// KV entry, the KV operation verbs of /v1/kv and /v1/txn, sessions, and watch scopes. Field
// meanings follow Consul's structs.DirEntry / structs.Session (see docs/consul-behaviour.md).
//
// Thread safety: value types; no internal synchronisation.
#ifndef DEVSERVER_STORE_TYPES_H_
#define DEVSERVER_STORE_TYPES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace registry::devserver {

// One key/value entry, as Consul's DirEntry. An empty `value` is reported as JSON null.
struct DirEntry {
  std::string key;
  std::string value;
  uint64_t flags = 0;
  uint64_t lock_index = 0;
  std::string session;  // holder's session id, empty when unlocked
  uint64_t create_index = 0;
  uint64_t modify_index = 0;

  // Consul's DirEntry.Equal: the fields whose equality makes a write a no-op.
  bool SameContent(const DirEntry& other) const {
    return lock_index == other.lock_index && key == other.key && flags == other.flags &&
           value == other.value && session == other.session;
  }
};

// The KV verbs of /v1/txn; the plain /v1/kv endpoint maps onto kSet, kCas, kLock, kUnlock,
// kDelete, kDeleteTree and kDeleteCas.
enum class KvVerb {
  kSet,
  kCas,
  kLock,
  kUnlock,
  kGet,
  kGetOrEmpty,
  kGetTree,
  kCheckIndex,
  kCheckSession,
  kCheckNotExists,
  kDelete,
  kDeleteTree,
  kDeleteCas,
};

// Parses Consul's spelling ("set", "get-or-empty", "delete-cas", ...). Unknown verbs give
// InvalidArgument with Consul's message `unknown KV verb "<verb>"`.
absl::StatusOr<KvVerb> ParseKvVerb(absl::string_view verb);

// True for verbs that may modify the store.
bool IsWriteVerb(KvVerb verb);

// One KV operation. `index` is the CAS / check-index ModifyIndex; `session` the session for
// lock, unlock and check-session. A non-empty `error` marks an operation that could not be
// decoded (unknown verb, non-KV operation): inside a transaction it fails with that message
// while the other operations are still evaluated, as in Consul.
struct KvOp {
  KvVerb verb = KvVerb::kGet;
  std::string key;
  std::string value;
  uint64_t flags = 0;
  uint64_t index = 0;
  std::string session;
  std::string error;
};

// A failed transaction operation, as Consul's TxnError.
struct TxnError {
  int op_index = 0;
  std::string what;
};

// The outcome of a transaction: either results (errors empty) or errors (results empty).
struct TxnOutcome {
  std::vector<DirEntry> results;
  std::vector<TxnError> errors;
};

enum class SessionBehavior { kRelease, kDelete };

// A service health check bound to a session (Consul's ServiceCheck).
struct ServiceCheck {
  std::string id;
  std::string name_space;
};

// A live session, as reported by /v1/session/info.
struct SessionEntry {
  std::string id;
  std::string name;
  std::string node;
  absl::Duration lock_delay = absl::Seconds(15);
  SessionBehavior behavior = SessionBehavior::kRelease;
  std::string ttl;  // as given at creation ("15s"), empty for no TTL
  std::vector<std::string> node_checks;
  std::vector<ServiceCheck> service_checks;
  uint64_t create_index = 0;
  uint64_t modify_index = 0;
};

// A decoded /v1/session/create body with Consul's defaults already applied; the store
// validates it.
struct SessionCreateRequest {
  std::string name;
  std::string node;  // the HTTP layer defaults it to the agent's node
  absl::Duration lock_delay = absl::Seconds(15);
  std::string behavior = "release";  // validated by the store: "", release or delete
  std::string ttl;                   // Go duration text, validated by the store
  std::vector<std::string> node_checks = {"serfHealth"};
  std::vector<ServiceCheck> service_checks;
};

// What a blocking query watches: one key, every key under a prefix, or the sessions table.
struct WatchScope {
  enum class Kind { kKey, kPrefix, kSessions };
  Kind kind = Kind::kSessions;
  std::string target;  // key or prefix; unused for kSessions

  static WatchScope Key(absl::string_view key) { return {Kind::kKey, std::string(key)}; }
  static WatchScope Prefix(absl::string_view p) { return {Kind::kPrefix, std::string(p)}; }
  static WatchScope Sessions() { return {Kind::kSessions, ""}; }
};

}  // namespace registry::devserver

#endif  // DEVSERVER_STORE_TYPES_H_

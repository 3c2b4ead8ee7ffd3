// SPDX-License-Identifier: Apache-2.0
#include "consul/txn.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "consul/errors.h"
#include "consul/json_util.h"
#include "nlohmann/json.hpp"

namespace registry::consul {
namespace {

bool WritesValue(TxnVerb verb) {
  return verb == TxnVerb::kSet || verb == TxnVerb::kCas || verb == TxnVerb::kLock ||
         verb == TxnVerb::kUnlock;
}

bool UsesIndex(TxnVerb verb) {
  return verb == TxnVerb::kCas || verb == TxnVerb::kCheckIndex || verb == TxnVerb::kDeleteCas;
}

bool UsesSession(TxnVerb verb) {
  return verb == TxnVerb::kLock || verb == TxnVerb::kUnlock || verb == TxnVerb::kCheckSession;
}

bool TakesPrefix(TxnVerb verb) { return verb == TxnVerb::kGetTree || verb == TxnVerb::kDeleteTree; }

TxnOp MakeOp(TxnVerb verb, std::string key) {
  TxnOp op;
  op.verb = verb;
  op.key = std::move(key);
  return op;
}

absl::Status OpError(size_t i, const TxnOp& op, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("consul txn op ", i, " (", TxnVerbName(op.verb),
                                                 " '", absl::CHexEscape(op.key), "'): ", problem));
}

absl::StatusOr<nlohmann::json> OpToJson(size_t i, const TxnOp& op) {
  absl::Status key = ValidateConsulKey(op.key, TakesPrefix(op.verb));
  if (!key.ok()) return OpError(i, op, key.message());
  nlohmann::json kv = {{"Verb", TxnVerbName(op.verb)}, {"Key", op.key}};
  if (WritesValue(op.verb)) {
    if (op.value.size() > kMaxValueBytes) {
      return OpError(i, op,
                     absl::StrCat("value of ", op.value.size(), " bytes exceeds the limit of ",
                                  kMaxValueBytes, " bytes"));
    }
    kv["Value"] = absl::Base64Escape(op.value);
    kv["Flags"] = op.flags;
  }
  if (UsesIndex(op.verb)) kv["Index"] = op.index;
  if (UsesSession(op.verb)) {
    if (op.session.empty()) return OpError(i, op, "needs a session id");
    kv["Session"] = op.session;
  }
  return nlohmann::json{{"KV", std::move(kv)}};
}

absl::Status ParseResults(const nlohmann::json& body, TxnResult* result) {
  auto results = body.find("Results");
  if (results == body.end() || results->is_null()) return absl::OkStatus();
  if (!results->is_array()) return absl::InvalidArgumentError("\"Results\" is not an array");
  for (size_t i = 0; i < results->size(); ++i) {
    const nlohmann::json& item = (*results)[i];
    std::string what = absl::StrCat("result ", i);
    RETURN_IF_ERROR(ExpectObject(item, what));
    auto kv = item.find("KV");
    if (kv == item.end()) continue;  // not a KV result (we send only KV ops)
    ASSIGN_OR_RETURN(DirEntry entry, DirEntryFromJson(*kv, what));
    result->results.push_back(std::move(entry));
  }
  return absl::OkStatus();
}

absl::Status ParseErrors(const nlohmann::json& body, TxnResult* result) {
  auto errors = body.find("Errors");
  if (errors == body.end() || !errors->is_array() || errors->empty()) {
    return absl::InvalidArgumentError("rolled-back transaction without an \"Errors\" array");
  }
  for (size_t i = 0; i < errors->size(); ++i) {
    std::string what = absl::StrCat("error ", i);
    const nlohmann::json& item = (*errors)[i];
    RETURN_IF_ERROR(ExpectObject(item, what));
    TxnError error;
    ASSIGN_OR_RETURN(uint64_t op_index, RequiredUint(item, "OpIndex", what));
    error.op_index = static_cast<size_t>(op_index);
    ASSIGN_OR_RETURN(std::optional<std::string> text, OptionalString(item, "What", what));
    error.what = text.value_or("");
    error.failure = TxnFailureOfReason(error.what);
    result->errors.push_back(std::move(error));
  }
  return absl::OkStatus();
}

// `text` with every Go-quoted string (a key, a session id) emptied to "", so that only Consul's
// own words are read; `text` itself if a quote is not closed.
std::string WithoutQuotedStrings(absl::string_view text) {
  std::string out;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!quoted) {
      out.push_back(c);
      quoted = c == '"';
    } else if (c == '\\') {
      ++i;  // an escaped character, '"' included
    } else if (c == '"') {
      out.push_back(c);
      quoted = false;
    }
  }
  return quoted ? std::string(text) : out;
}

// BuildTxnRequest's refusal of more than kMaxTxnOps operations, between their count and the limit.
constexpr absl::string_view kTooManyOpsRefusal = " operations exceed the limit of ";

// Consul's reasons for a failed condition (state/txn.go, state/kvs.go), lower case.
constexpr absl::string_view kCheckFailedReasons[] = {
    "index check",      // failed index check for key "k", current modify index 5 != 4
    "check index",      // failed to check index, key "k" doesn't exist
    "session check",    // failed session check for key "k", current session "" != "s"
    "check session",    // failed to check session, key "k" doesn't exist
    "index is stale",   // failed to set (delete) key "k", index is stale
    "doesn't exist",    // key "k" doesn't exist
    "exists",           // key "k" exists
    "lock isn't held",  // failed to unlock key "k", lock isn't held, or is held by another session
};

// Whether applying `ops` twice is applying them once (ReplaySafe, txn.h).
bool AppliesTheSameTwice(absl::Span<const TxnOp> ops) {
  for (const TxnOp& op : ops) {
    switch (op.verb) {
      case TxnVerb::kSet:
      case TxnVerb::kLock:
      case TxnVerb::kGet:
      case TxnVerb::kGetOrEmpty:
      case TxnVerb::kGetTree:
      case TxnVerb::kDelete:
      case TxnVerb::kDeleteTree:
        continue;
      default:  // a check, a compare-and-set or an unlock: a second apply sees the first one's work
        return false;
    }
  }
  return true;
}

}  // namespace

const char* TxnVerbName(TxnVerb verb) {
  // Indexed by TxnVerb, in its order.
  static constexpr const char* kNames[] = {
      "set",          "cas",         "lock",        "unlock",        "get",
      "get-or-empty", "get-tree",    "check-index", "check-session", "check-not-exists",
      "delete",       "delete-tree", "delete-cas"};
  static_assert(std::size(kNames) == static_cast<size_t>(TxnVerb::kDeleteCas) + 1,
                "a TxnVerb without a name");
  const auto index = static_cast<size_t>(verb);
  return index < std::size(kNames) ? kNames[index] : "get";
}

TxnOp TxnOp::Set(std::string key, std::string value, uint64_t flags) {
  TxnOp op = MakeOp(TxnVerb::kSet, std::move(key));
  op.value = std::move(value);
  op.flags = flags;
  return op;
}

TxnOp TxnOp::Cas(std::string key, std::string value, uint64_t index, uint64_t flags) {
  TxnOp op = MakeOp(TxnVerb::kCas, std::move(key));
  op.value = std::move(value);
  op.index = index;
  op.flags = flags;
  return op;
}

TxnOp TxnOp::Lock(std::string key, std::string value, std::string session, uint64_t flags) {
  TxnOp op = MakeOp(TxnVerb::kLock, std::move(key));
  op.value = std::move(value);
  op.session = std::move(session);
  op.flags = flags;
  return op;
}

TxnOp TxnOp::Unlock(std::string key, std::string value, std::string session, uint64_t flags) {
  TxnOp op = Lock(std::move(key), std::move(value), std::move(session), flags);
  op.verb = TxnVerb::kUnlock;
  return op;
}

TxnOp TxnOp::Get(std::string key) { return MakeOp(TxnVerb::kGet, std::move(key)); }
TxnOp TxnOp::GetOrEmpty(std::string key) { return MakeOp(TxnVerb::kGetOrEmpty, std::move(key)); }
TxnOp TxnOp::GetTree(std::string prefix) { return MakeOp(TxnVerb::kGetTree, std::move(prefix)); }

TxnOp TxnOp::CheckIndex(std::string key, uint64_t index) {
  TxnOp op = MakeOp(TxnVerb::kCheckIndex, std::move(key));
  op.index = index;
  return op;
}

TxnOp TxnOp::CheckSession(std::string key, std::string session) {
  TxnOp op = MakeOp(TxnVerb::kCheckSession, std::move(key));
  op.session = std::move(session);
  return op;
}

TxnOp TxnOp::CheckNotExists(std::string key) {
  return MakeOp(TxnVerb::kCheckNotExists, std::move(key));
}

TxnOp TxnOp::Delete(std::string key) { return MakeOp(TxnVerb::kDelete, std::move(key)); }

TxnOp TxnOp::DeleteTree(std::string prefix) {
  return MakeOp(TxnVerb::kDeleteTree, std::move(prefix));
}

TxnOp TxnOp::DeleteCas(std::string key, uint64_t index) {
  TxnOp op = MakeOp(TxnVerb::kDeleteCas, std::move(key));
  op.index = index;
  return op;
}

bool ReplaySafe(absl::Span<const TxnOp> ops, Writers writers) {
  if (!AppliesTheSameTwice(ops)) return false;
  if (writers == Writers::kOnlyThisCaller) return true;
  return std::none_of(ops.begin(), ops.end(), [](const TxnOp& op) {
    return op.verb == TxnVerb::kSet || op.verb == TxnVerb::kDelete ||
           op.verb == TxnVerb::kDeleteTree;
  });
}

absl::StatusOr<HttpRequest> BuildTxnRequest(absl::Span<const TxnOp> ops, Writers writers) {
  if (ops.empty()) return absl::InvalidArgumentError("consul txn: no operations");
  if (ops.size() > kMaxTxnOps) {
    return absl::InvalidArgumentError(
        absl::StrCat("consul txn: ", ops.size(), kTooManyOpsRefusal, kMaxTxnOps));
  }
  nlohmann::json body = nlohmann::json::array();
  for (size_t i = 0; i < ops.size(); ++i) {
    ASSIGN_OR_RETURN(nlohmann::json op, OpToJson(i, ops[i]));
    body.push_back(std::move(op));
  }
  HttpRequest request;
  request.method = HttpMethod::kPut;
  request.path = "/v1/txn";
  request.replay_safe = ReplaySafe(ops, writers);
  request.headers.emplace_back("Content-Type", "application/json");
  request.body = body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (request.body.size() > kMaxTxnBodyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("consul txn: body of ", request.body.size(), " bytes (", ops.size(),
                     " operations) exceeds the limit of ", kMaxTxnBodyBytes, " bytes"));
  }
  return request;
}

absl::StatusOr<TxnResult> ParseTxnResponse(const HttpRequest& request,
                                           const HttpResponse& response) {
  if (response.status != 200 && response.status != 409) {
    return ErrorFromResponse(request, response);
  }
  ASSIGN_OR_RETURN(nlohmann::json body, ParseJsonBody(request, response));
  absl::Status shape = ExpectObject(body, "body");
  if (!shape.ok()) return MalformedResponse(request, shape.message());
  TxnResult result;
  result.committed = response.status == 200;
  shape = result.committed ? ParseResults(body, &result) : ParseErrors(body, &result);
  if (!shape.ok()) return MalformedResponse(request, shape.message());
  // A rollback for lack of an ACL right is an authorization failure, not a conflict to inspect.
  if (result.FailedWith(TxnFailure::kPermissionDenied)) {
    return ErrorFromResponse(request, response);
  }
  if (response.FindHeader("X-Consul-Index") != nullptr) {
    ASSIGN_OR_RETURN(result.meta, ParseQueryMeta(request, response));
  }
  return result;
}

bool TxnResult::FailedWith(TxnFailure failure) const {
  for (const TxnError& error : errors) {
    if (error.failure == failure) return true;
  }
  return false;
}

TxnFailure TxnFailureOfReason(absl::string_view what) {
  const std::string reason = absl::AsciiStrToLower(WithoutQuotedStrings(what));
  // In this order: the most telling first.
  if (absl::StrContains(reason, "permission denied")) return TxnFailure::kPermissionDenied;
  if (absl::StrContains(reason, "invalid session")) return TxnFailure::kInvalidSession;
  if (absl::StrContains(reason, "lock delay")) return TxnFailure::kLockDelay;
  if (absl::StrContains(reason, "already held")) return TxnFailure::kAlreadyHeld;
  for (absl::string_view check : kCheckFailedReasons) {
    if (absl::StrContains(reason, check)) return TxnFailure::kCheckFailed;
  }
  return TxnFailure::kOther;
}

TxnFailure TxnFailureOf(const absl::Status& status) {
  if (status.ok()) return TxnFailure::kNone;
  if (absl::IsPermissionDenied(status)) return TxnFailure::kPermissionDenied;
  if (IsInvalidSession(status)) return TxnFailure::kInvalidSession;
  const std::string message = absl::AsciiStrToLower(status.message());
  if (absl::IsInvalidArgument(status) &&
      (absl::StrContains(message, "too many operations") ||  // the server's 413
       absl::StrContains(message, kTooManyOpsRefusal))) {
    return TxnFailure::kTooManyOperations;
  }
  return TxnFailure::kOther;
}

}  // namespace registry::consul

// SPDX-License-Identifier: Apache-2.0
// Store: KV operations (Consul's kvsSetCASTxn, kvsLockTxn, kvsUnlockTxn, txnKVS, ...) shared
// by the single-op /v1/kv path (Apply) and transactions (Txn).
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "devserver/go_compat.h"
#include "devserver/store.h"

namespace registry::devserver {
namespace {

struct VerbName {
  absl::string_view name;
  KvVerb verb;
};
constexpr VerbName kVerbs[] = {
    {"set", KvVerb::kSet},
    {"cas", KvVerb::kCas},
    {"lock", KvVerb::kLock},
    {"unlock", KvVerb::kUnlock},
    {"get", KvVerb::kGet},
    {"get-or-empty", KvVerb::kGetOrEmpty},
    {"get-tree", KvVerb::kGetTree},
    {"check-index", KvVerb::kCheckIndex},
    {"check-session", KvVerb::kCheckSession},
    {"check-not-exists", KvVerb::kCheckNotExists},
    {"delete", KvVerb::kDelete},
    {"delete-tree", KvVerb::kDeleteTree},
    {"delete-cas", KvVerb::kDeleteCas},
};

// Writes and checks answer without the value (Consul clones the entry and blanks Value).
DirEntry WithoutValue(DirEntry entry) {
  entry.value.clear();
  return entry;
}

}  // namespace

absl::StatusOr<KvVerb> ParseKvVerb(absl::string_view verb) {
  for (const VerbName& known : kVerbs) {
    if (known.name == verb) return known.verb;
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown KV verb ", GoQuote(verb)));
}

bool IsWriteVerb(KvVerb verb) {
  switch (verb) {
    case KvVerb::kSet:
    case KvVerb::kCas:
    case KvVerb::kLock:
    case KvVerb::kUnlock:
    case KvVerb::kDelete:
    case KvVerb::kDeleteTree:
    case KvVerb::kDeleteCas:
      return true;
    default:
      return false;
  }
}

// Long by design: one case per KV verb of Consul's txn, in Consul's order and with its exact
// messages, kept in one switch so that it reads side by side with Consul's own.
absl::StatusOr<Store::OpResult> Store::ExecuteLocked(const KvOp& op, Mutation* m) {
  OpResult result;
  const std::string quoted = GoQuote(op.key);
  auto fail = [&](std::string message) {
    result.ok = false;
    result.failure = std::move(message);
    return result;
  };
  if (!op.error.empty()) return fail(op.error);
  auto existing = kvs_.find(op.key);
  const DirEntry* current = existing == kvs_.end() ? nullptr : &existing->second;
  DirEntry incoming{op.key, op.value, op.flags, 0, "", 0, 0};

  switch (op.verb) {
    case KvVerb::kSet:
      result.entries.push_back(WithoutValue(SetLocked(std::move(incoming), false, m)));
      return result;

    case KvVerb::kCas:
      // Index 0 means create-if-absent; otherwise it must equal the current ModifyIndex.
      if ((op.index == 0 && current != nullptr) || (op.index != 0 && current == nullptr) ||
          (current != nullptr && op.index != 0 && op.index != current->modify_index)) {
        return fail(absl::StrCat("failed to set key ", quoted, ", index is stale"));
      }
      result.entries.push_back(WithoutValue(SetLocked(std::move(incoming), false, m)));
      return result;

    case KvVerb::kLock: {
      if (op.session.empty()) return absl::FailedPreconditionError("missing session");
      if (absl::Status uuid = CheckMemdbUuid(op.session); !uuid.ok()) {
        return absl::FailedPreconditionError(
            absl::StrCat("failed session lookup: ", uuid.message()));
      }
      if (sessions_.find(op.session) == sessions_.end()) {
        return absl::FailedPreconditionError(absl::StrCat("invalid session ", GoQuote(op.session)));
      }
      incoming.session = op.session;
      if (current == nullptr) {
        incoming.lock_index = 1;
      } else if (current->session == op.session) {
        incoming.lock_index = current->lock_index;  // re-acquire by the holder
      } else if (!current->session.empty()) {
        return fail(absl::StrCat("failed to lock key ", quoted, ", lock is already held"));
      } else {
        incoming.lock_index = current->lock_index + 1;
      }
      result.entries.push_back(WithoutValue(SetLocked(std::move(incoming), true, m)));
      return result;
    }

    case KvVerb::kUnlock:
      if (op.session.empty()) return absl::FailedPreconditionError("missing session");
      if (current == nullptr || current->session != op.session) {
        return fail(absl::StrCat("failed to unlock key ", quoted,
                                 ", lock isn't held, or is held by another session"));
      }
      incoming.lock_index = current->lock_index;
      result.entries.push_back(WithoutValue(SetLocked(std::move(incoming), true, m)));
      return result;

    case KvVerb::kGet:
      if (current == nullptr) return fail(absl::StrCat("key ", quoted, " doesn't exist"));
      result.entries.push_back(*current);
      return result;

    case KvVerb::kGetOrEmpty:
      if (current != nullptr) {
        result.entries.push_back(*current);
      } else {
        // Consul echoes the request's own fields back, with no value.
        result.entries.push_back(DirEntry{op.key, "", op.flags, 0, op.session, 0, op.index});
      }
      return result;

    case KvVerb::kGetTree:
      VisitListLocked(op.key,
                      [&result](const DirEntry& entry) { result.entries.push_back(entry); });
      return result;

    case KvVerb::kCheckIndex:
      if (current == nullptr) {
        return fail(absl::StrCat("failed to check index, key ", quoted, " doesn't exist"));
      }
      if (current->modify_index != op.index) {
        return fail(absl::StrCat("failed index check for key ", quoted, ", current modify index ",
                                 current->modify_index, " != ", op.index));
      }
      result.entries.push_back(WithoutValue(*current));
      return result;

    case KvVerb::kCheckSession:
      if (current == nullptr) {
        return fail(absl::StrCat("failed to check session, key ", quoted, " doesn't exist"));
      }
      if (current->session != op.session) {
        return fail(absl::StrCat("failed session check for key ", quoted, ", current session ",
                                 GoQuote(current->session), " != ", GoQuote(op.session)));
      }
      result.entries.push_back(WithoutValue(*current));
      return result;

    case KvVerb::kCheckNotExists:
      if (current != nullptr) return fail(absl::StrCat("key ", quoted, " exists"));
      return result;

    case KvVerb::kDelete:
      DeleteLocked(op.key, m);
      return result;

    case KvVerb::kDeleteTree:
      DeleteTreeLocked(op.key, m);
      return result;

    case KvVerb::kDeleteCas:
      // An absent key counts as deleted; a present one must match the index (0 never does).
      if (current == nullptr) return result;
      if (current->modify_index != op.index) {
        return fail(absl::StrCat("failed to delete key ", quoted, ", index is stale"));
      }
      DeleteLocked(op.key, m);
      return result;
  }
  return absl::InternalError("unhandled KV verb");
}

absl::StatusOr<bool> Store::Apply(const KvOp& op) {
  Callbacks fired;
  bool answer = false;
  {
    absl::MutexLock lock(&mu_);
    if (op.key.empty() && op.verb != KvVerb::kDeleteTree) {
      return absl::FailedPreconditionError("Must provide key");
    }
    Mutation m = BeginLocked();
    if (op.verb == KvVerb::kLock) {
      auto delay = lock_delays_.find(op.key);
      if (delay != lock_delays_.end() && delay->second > m.now) return false;
    }
    absl::StatusOr<OpResult> result = ExecuteLocked(op, &m);
    if (!result.ok()) {
      RollbackLocked(&m);
      return result.status();
    }
    answer = result->ok;
    CommitLocked(m, &fired);
  }
  for (auto& callback : fired) callback();
  return answer;
}

TxnOutcome Store::Txn(const std::vector<KvOp>& ops) {
  Callbacks fired;
  TxnOutcome outcome;
  {
    absl::MutexLock lock(&mu_);
    Mutation m = BeginLocked();
    // Consul's preCheck runs before anything is applied; its errors stop the transaction.
    for (size_t i = 0; i < ops.size(); ++i) {
      const KvOp& op = ops[i];
      if (!op.error.empty()) continue;  // reported when evaluated
      if (op.key.empty() && op.verb != KvVerb::kDeleteTree) {
        outcome.errors.push_back({static_cast<int>(i), "Must provide key"});
      } else if (op.verb == KvVerb::kLock) {
        auto delay = lock_delays_.find(op.key);
        if (delay != lock_delays_.end() && delay->second > m.now) {
          outcome.errors.push_back(
              {static_cast<int>(i),
               absl::StrCat("failed to lock key ", GoQuote(op.key), " due to lock delay")});
        }
      }
    }
    if (!outcome.errors.empty()) return outcome;

    for (size_t i = 0; i < ops.size(); ++i) {
      absl::StatusOr<OpResult> result = ExecuteLocked(ops[i], &m);
      if (!result.ok()) {
        outcome.errors.push_back({static_cast<int>(i), std::string(result.status().message())});
      } else if (!result->ok) {
        outcome.errors.push_back({static_cast<int>(i), std::move(result->failure)});
      } else {
        for (DirEntry& entry : result->entries) outcome.results.push_back(std::move(entry));
      }
    }
    if (!outcome.errors.empty()) {
      RollbackLocked(&m);
      outcome.results.clear();
      return outcome;
    }
    CommitLocked(m, &fired);
  }
  for (auto& callback : fired) callback();
  return outcome;
}

}  // namespace registry::devserver

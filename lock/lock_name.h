// SPDX-License-Identifier: Apache-2.0
// lock/lock_name.h
//
// Lock names and where their Consul keys live.
//
// A lock name is a '/'-separated path of at most kMaxLockNameBytes bytes: "metadata",
// "schema/sharding_db" or "/lock/exclusive/locks/sharding_db". One leading '/' is ignored, so
// "/a/b" and "a/b" name the same lock. Every segment is non-empty and not "." or ".."; the name
// has no control characters and does not start or end with a space.
//
// Key layout: the lock named "a/b" of a repository with namespace "ns" is the Consul key
//
//     ns/lock/a/b/
//
// built with KeySpace::TreePrefix("/lock") + "a/b" + "/". The trailing '/' makes it a "folder"
// key, which no repository key maps to (a repository key never ends with '/'), so Get, Persist,
// Update, PersistEphemeral and PersistExclusiveEphemeral of any key can neither read nor
// overwrite a lock, and a lock never shadows a user key: "/lock/a/b" stays an ordinary key. It
// still lives under the namespace (namespace isolation holds), so only a recursive Delete of
// "/", "/lock" or an ancestor path removes lock keys, and holders then learn that their locks
// are lost. Like Consul's own lock API, a release leaves the (unlocked) key in place, so a
// listing of "/lock" (GetChildrenKeys) shows the first segment of every lock name used so far.
//
// Thread safety: pure functions.
#ifndef LOCK_LOCK_NAME_H_
#define LOCK_LOCK_NAME_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "repository/key_space.h"

namespace registry::lock {

inline constexpr size_t kMaxLockNameBytes = 512;

// OK if `name` is a valid lock name (see above); else InvalidArgument quoting it and saying why.
absl::Status ValidateLockName(absl::string_view name);

// The canonical form of a valid name: without its leading '/' ("/a/b" -> "a/b").
// Errors: as ValidateLockName.
absl::StatusOr<std::string> CanonicalLockName(absl::string_view name);

// The Consul key of the lock with canonical name `canonical` in `space` ("ns/lock/a/b/").
std::string LockConsulKey(const KeySpace& space, absl::string_view canonical);

// The fair lock with canonical name `canonical` has two parts (consul_fair_lock.h): its owner key
// "ns/fair-lock/a/b/", taken like a mutex's key by the head of the queue, and its queue
// "ns/fair-queue/a/b/", whose entries are "<queue><session>.<16 hex digits>/". Both are folder
// keys, so no repository key maps to one; each tree holds one kind of key, and an entry is
// exactly one segment below its queue, so the entries of the fair lock "a/b/c" (under
// "ns/fair-queue/a/b/c/") are never taken for those of "a/b".
std::string FairLockOwnerKey(const KeySpace& space, absl::string_view canonical);
std::string FairLockQueuePrefix(const KeySpace& space, absl::string_view canonical);

// The semaphore with canonical name `canonical` (consul_semaphore.h) lives under
// "ns/semaphore/a/b/": that folder key is its holders record, and its holders' entries are
// "ns/semaphore/a/b/<session>.<16 hex digits>/", bound to their sessions. The record of a
// deeper semaphore ("ns/semaphore/a/b/c/") is never bound to a session, so it is never taken
// for an entry of "a/b", and the entries of "a/b/c" are two segments below "a/b".
std::string SemaphorePrefix(const KeySpace& space, absl::string_view canonical);

// The read/write lock with canonical name `canonical` (consul_rw_lock.h) lives under
// "ns/rwlock/a/b/", laid out as a semaphore: the record, and entries bound to sessions.
std::string RwLockPrefix(const KeySpace& space, absl::string_view canonical);

}  // namespace registry::lock

#endif  // LOCK_LOCK_NAME_H_

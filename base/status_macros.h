// SPDX-License-Identifier: Apache-2.0
// base/status_macros.h
//
// Debian's Abseil (20220623) ships no status macros; these two are the only ones the project
// uses. Both evaluate their expression exactly once.
//
//   RETURN_IF_ERROR(client.Put(...));                 // returns the status if not ok
//   ASSIGN_OR_RETURN(auto value, client.Get(key));    // declares `value` or returns the status
#ifndef BASE_STATUS_MACROS_H_
#define BASE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define REGISTRY_STATUS_CONCAT_INNER_(a, b) a##b
#define REGISTRY_STATUS_CONCAT_(a, b) REGISTRY_STATUS_CONCAT_INNER_(a, b)

#define RETURN_IF_ERROR(expr)                                                                      \
  do {                                                                                             \
    if (::absl::Status registry_status_ = (expr); !registry_status_.ok()) return registry_status_; \
  } while (false)

#define ASSIGN_OR_RETURN(lhs, expr) \
  REGISTRY_ASSIGN_OR_RETURN_IMPL_(REGISTRY_STATUS_CONCAT_(registry_statusor_, __LINE__), lhs, expr)

#define REGISTRY_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                    \
  if (!statusor.ok()) return std::move(statusor).status();   \
  lhs = std::move(statusor).value()

#endif  // BASE_STATUS_MACROS_H_

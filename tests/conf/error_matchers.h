// SPDX-License-Identifier: Apache-2.0
// tests/conf/error_matchers.h
//
// Assertions for config errors: the code, and the pieces the message must name.
#ifndef REGISTRY_TESTS_CONF_ERROR_MATCHERS_H_
#define REGISTRY_TESTS_CONF_ERROR_MATCHERS_H_

#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace registry::conf {

// Succeeds iff `status` has `code` and its message contains every one of `parts`.
inline ::testing::AssertionResult HasError(const absl::Status& status, absl::StatusCode code,
                                           std::initializer_list<std::string> parts) {
  if (status.code() != code) {
    return ::testing::AssertionFailure()
           << "expected code " << absl::StatusCodeToString(code) << ", got " << status;
  }
  for (const std::string& part : parts) {
    if (std::string(status.message()).find(part) == std::string::npos) {
      return ::testing::AssertionFailure()
             << "message \"" << status.message() << "\" lacks \"" << part << "\"";
    }
  }
  return ::testing::AssertionSuccess();
}

template <typename T>
::testing::AssertionResult HasError(const absl::StatusOr<T>& result, absl::StatusCode code,
                                    std::initializer_list<std::string> parts) {
  if (result.ok()) return ::testing::AssertionFailure() << "expected an error, got a value";
  return HasError(result.status(), code, parts);
}

// Shorthand for the common case.
template <typename T>
::testing::AssertionResult IsInvalid(const T& result, std::initializer_list<std::string> parts) {
  return HasError(result, absl::StatusCode::kInvalidArgument, parts);
}

}  // namespace registry::conf

#endif  // REGISTRY_TESTS_CONF_ERROR_MATCHERS_H_

// SPDX-License-Identifier: Apache-2.0
// cmake/test_pch_anchor.cc: the one file of the targets whose precompiled header test targets
// reuse (cmake/fast_test_build.cmake). It has nothing of its own.
namespace registry_test_pch_anchor {}

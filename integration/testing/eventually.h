// SPDX-License-Identifier: Apache-2.0
// integration/testing/eventually.h
//
// The one wait helper of the tests, unit (tests/) and integration (integration/): Eventually
// polls a condition until it holds or a timeout passes, and kPatience is the timeout of waits for
// what should happen promptly. Kept apart from server_test.h, and in a library of its own
// (integration_eventually: Abseil's time only), so that a unit test can use it without linking
// the servers.
//
// Thread safety: Eventually may be called from any thread; it calls `condition` on the caller's.
#ifndef INTEGRATION_TESTING_EVENTUALLY_H_
#define INTEGRATION_TESTING_EVENTUALLY_H_

#include <functional>

#include "absl/time/time.h"

namespace registry::testing {

// How long a test waits for something that should happen promptly before it fails. Why 15 s: a
// wait ends as soon as its condition holds, so a long patience costs time only when a test fails;
// it is several times what the slowest of these waits takes when all is well (a holder killed in
// integration/lock_safety is let go after two 2 s TTLs and a 500 ms lock-delay: 4.5 s), so neither
// a loaded 2-core machine nor a real Consul agent's slower answers fail a test that should pass.
// A wait known to take longer scales it (4 * kPatience) or states its own bound.
inline constexpr absl::Duration kPatience = absl::Seconds(15);

// Polls `condition` until it holds or `timeout` passes; the last check is made at the deadline.
// For state with no change notification (a server's view, a process table, a counter). `every`
// paces the checks: more than the default only when a check is costly (it starts a process or
// queries a real cluster).
bool Eventually(const std::function<bool()>& condition, absl::Duration timeout = kPatience,
                absl::Duration every = absl::Milliseconds(10));

}  // namespace registry::testing

#endif  // INTEGRATION_TESTING_EVENTUALLY_H_

// SPDX-License-Identifier: Apache-2.0
// integration/differential/scenarios.h
//
// The request scenarios the differential test sends to the dev server and to real Consul: KV
// (raw, keys, separators, flags, cas, limits, odd keys), blocking-query arguments, sessions
// (behaviours, lock-delay), acquire/release, every txn verb and rollbacks, status, methods, and
// ACLs (no token, an unknown token).
#ifndef INTEGRATION_DIFFERENTIAL_SCENARIOS_H_
#define INTEGRATION_DIFFERENTIAL_SCENARIOS_H_

#include <string>
#include <vector>

namespace registry::differential {

// The token a step presents: the master token, none (the anonymous token), or one Consul does
// not know.
enum class Caller { kMaster, kAnonymous, kUnknownToken };

struct Step {
  std::string method;
  std::string target;  // {s1}, {s2}: sessions created earlier; {index}: the last X-Consul-Index
  std::string body = "";
  Caller caller = Caller::kMaster;
  const char* differs_because = nullptr;
};

struct Scenario {
  const char* name;
  std::vector<Step> steps;
};

std::vector<Scenario> Scenarios();

}  // namespace registry::differential

#endif  // INTEGRATION_DIFFERENTIAL_SCENARIOS_H_

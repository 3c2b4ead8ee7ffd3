// SPDX-License-Identifier: Apache-2.0
// tests/conf/yaml_fixture.h
//
// Builds registry YAML for tests with known line numbers.
#ifndef REGISTRY_TESTS_CONF_YAML_FIXTURE_H_
#define REGISTRY_TESTS_CONF_YAML_FIXTURE_H_

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace registry::conf {

// Line on which the first of the `extra` props of ClusterYaml() lands.
inline constexpr int kFirstExtraLine = 8;

// A valid `mode:` block (namespace on line 6, server-lists on line 7) followed by `extra`
// props, one per line ("timeToLiveSeconds: 3x\n" lands on line kFirstExtraLine).
inline std::string ClusterYaml(absl::string_view extra = "") {
  std::string yaml =
      "mode:\n"
      "  type: Cluster\n"
      "  repository:\n"
      "    type: Consul\n"
      "    props:\n"
      "      namespace: governance_ds\n"
      "      server-lists: 127.0.0.1:8500\n";
  for (absl::string_view line : absl::StrSplit(extra, '\n', absl::SkipEmpty())) {
    absl::StrAppend(&yaml, "      ", line, "\n");
  }
  return yaml;
}

// A `mode:` block whose props are exactly `props` (first prop on line 6).
inline std::string ClusterYamlWithOnlyProps(absl::string_view props) {
  std::string yaml =
      "mode:\n"
      "  type: Cluster\n"
      "  repository:\n"
      "    type: Consul\n"
      "    props:\n";
  for (absl::string_view line : absl::StrSplit(props, '\n', absl::SkipEmpty())) {
    absl::StrAppend(&yaml, "      ", line, "\n");
  }
  return yaml;
}

}  // namespace registry::conf

#endif  // REGISTRY_TESTS_CONF_YAML_FIXTURE_H_

// SPDX-License-Identifier: Apache-2.0
// integration/differential/normalize.h
//
// What may legitimately differ between two Consul servers answering the same requests is
// replaced before they are compared: Raft indexes become their order of first appearance
// (<i1>, <i2>, ... so equality and order still count), session IDs theirs (<s1>, ...), the
// values of Date and Content-Length go (JSON spacing differs), the base of a docs link in a
// text body goes (the page moved between versions; the anchor stays), and JSON bodies are
// compared parsed, in their field order. Header names are kept exactly as sent.
//
// Thread safety: a Normalizer belongs to one server's side of one scenario.
#ifndef INTEGRATION_DIFFERENTIAL_NORMALIZE_H_
#define INTEGRATION_DIFFERENTIAL_NORMALIZE_H_

#include <cstdint>
#include <map>
#include <string>

#include "integration/testing/dev_control.h"
#include "nlohmann/json.hpp"

namespace registry::differential {

class Normalizer {
 public:
  // "STATUS\nName: value\n...\n\nbody": headers sorted by name, normalized as above.
  std::string Describe(const integration::HttpReply& reply);

 private:
  std::string Index(uint64_t index);
  std::string Replace(const std::string& text);  // session IDs in free text
  void Walk(nlohmann::ordered_json* json);

  std::map<uint64_t, int> indexes_;
  std::map<std::string, int> sessions_;
};

}  // namespace registry::differential

#endif  // INTEGRATION_DIFFERENTIAL_NORMALIZE_H_

// SPDX-License-Identifier: Apache-2.0
// base/base64.h
//
// The digits of standard base64 (RFC 4648 section 4, the alphabet Consul's JSON uses for KV
// values), for the decoders that must name the offset of a bad byte as Consul's Go code does:
// registryctl's import of a `consul kv export` file and the dev server's txn bodies.
//
// Thread safety: pure function.
#ifndef BASE_BASE64_H_
#define BASE_BASE64_H_

namespace registry {

// The value of base64 digit `c` (0 to 63), or -1 if `c` is not one ('=' included).
inline int Base64Digit(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace registry

#endif  // BASE_BASE64_H_

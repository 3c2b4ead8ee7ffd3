// SPDX-License-Identifier: Apache-2.0
// tests/fuzz/listing_text.h
//
// Bodies of recursive KV listings (GET /v1/kv/<prefix>?recurse) written from fuzz input for
// listing_differ_fuzzer: mostly what Consul sends, so the differ is reached on every run, with
// the freedom JSON allows (field order, escapes, white space, unknown fields, null and missing
// values) and a few things Consul never does (bad base64, unsorted or repeated keys, missing
// indexes). Keys come from a small pool so that two listings share keys and indexes.
#ifndef TESTS_FUZZ_LISTING_TEXT_H_
#define TESTS_FUZZ_LISTING_TEXT_H_

#include <fuzzer/FuzzedDataProvider.h>

#include <string>

namespace registry::fuzz {

// A JSON array of DirEntry objects chosen by `input`.
std::string GenerateListing(FuzzedDataProvider& input);

}  // namespace registry::fuzz

#endif  // TESTS_FUZZ_LISTING_TEXT_H_

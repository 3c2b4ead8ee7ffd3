// SPDX-License-Identifier: Apache-2.0
// base/go_print.h
//
// Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. Consul
// answers a request whose URL path holds any other code point with a bare 400 before routing it
// (go-cleanhttp's PrintablePathCheckHandler), so a key holding one could be written by a
// transaction but never read by its path: the key checks refuse such keys
// (repository/key_space.h), and the dev server refuses such paths as Consul does. The table
// (go_print.cc) is generated from Python's Unicode data by scripts/gen-go-print.py.
//
// Thread safety: pure function.
#ifndef BASE_GO_PRINT_H_
#define BASE_GO_PRINT_H_

namespace registry {

bool GoIsPrint(char32_t rune);

}  // namespace registry

#endif  // BASE_GO_PRINT_H_

// SPDX-License-Identifier: Apache-2.0
// devserver/go_compat.h
//
// Consul is written in Go and its answers carry Go's spellings: durations are parsed with
// time.ParseDuration (?wait=, session TTL, LockDelay) and printed with time.Duration.String,
// numbers with strconv.ParseUint, error messages quote keys with %q, and unclean paths are
// redirected like Go's http.ServeMux does. The dev server must
// accept, reject and print exactly the same, so those few pieces are reimplemented here.
//
// Thread safety: pure functions, safe from any thread.
#ifndef DEVSERVER_GO_COMPAT_H_
#define DEVSERVER_GO_COMPAT_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "base/go_print.h"

namespace registry::devserver {

// Parses `text` like Go's time.ParseDuration: an optional sign, then one or more
// <decimal><unit> groups with units ns, us, µs, μs, ms, s, m, h ("1500ms", "1.5s", "1m30s",
// "-2h"); a bare "0" is zero. Returns InvalidArgument naming `text` (Go's message,
// e.g. `time: invalid duration "abc"`) for anything Go would reject, including overflow.
absl::StatusOr<absl::Duration> ParseGoDuration(absl::string_view text);

// Formats `d` like Go's time.Duration.String: "0s", "500ns", "1.5µs", "250ms", "10s",
// "1m30s", "24h0m0s". Infinite durations are clamped to Go's int64 range.
std::string FormatGoDuration(absl::Duration d);

// Parses `text` like Go's strconv.ParseUint(text, 10, 64): decimal digits only, no sign, no
// spaces. On failure returns InvalidArgument with Go's message, e.g.
// `strconv.ParseUint: parsing "abc": invalid syntax` (or "value out of range").
absl::StatusOr<uint64_t> ParseGoUint(absl::string_view text);

// Returns `text` quoted like Go's %q verb: surrounded by double quotes, with `"` and `\`
// escaped and control bytes written as \n, \t, \r or \xNN.
std::string GoQuote(absl::string_view text);

// Appends `text` to `out` as a JSON string the way Go's json.Marshal writes it (and so Consul's
// answers): `"` and `\` escaped; \b \f \n \r \t by name and other control bytes as \u00XX;
// `<`, `>`, `&`, U+2028 and U+2029 as \u escapes (Go's HTML-safe default); every byte that is not
// part of valid UTF-8 as \ufffd. Keys arrive from URL paths as arbitrary bytes, so this never
// fails.
void AppendGoJsonString(absl::string_view text, std::string* out);

// Cleans a request path like Go's http.ServeMux (cleanPath): rooted, no empty, "." or ".."
// elements, a trailing '/' kept. Consul answers a path that is not clean with a 301 to this
// ("/v1/kv//a" -> "/v1/kv/a", "/v1/kv/a/./b/" -> "/v1/kv/a/b/", "/v1/kv/a/.." -> "/v1/kv").
std::string GoCleanPath(absl::string_view path);

// True iff every rune of the decoded request `path` is printable (GoIsPrint), read as Go ranges
// over a string: a byte that starts no valid UTF-8 sequence is U+FFFD, which is printable.
// Consul answers any other path with a bare 400 before routing it (go-cleanhttp's
// PrintablePathCheckHandler).
bool GoPathIsPrintable(absl::string_view path);

// Decodes `text` like Go's base64.StdEncoding.DecodeString (padding required, '\r' and '\n'
// skipped) into *out. On failure returns InvalidArgument with Go's text, naming the offset as
// Go computes it: "illegal base64 data at input byte 4".
absl::Status GoBase64Decode(absl::string_view text, std::string* out);

// Checks a session ID as go-memdb's UUID index does before Consul's state store looks a session
// up: 36 bytes, at most four '-', an even number of hex digits. Returns OK or InvalidArgument
// with the text Consul passes on, e.g. "index error: UUID must be 36 characters" or
// "index error: Invalid UUID: encoding/hex: invalid byte: U+007A 'z'". Upper-case hex digits and
// hyphens anywhere pass, as in go-memdb.
absl::Status CheckMemdbUuid(absl::string_view id);

// Escapes a decoded path like Go's url.URL.EscapedPath: ASCII letters, digits, "-._~" and
// "$&+,/:;=@" stay, every other byte becomes %XX.
std::string GoEscapePath(absl::string_view path);

}  // namespace registry::devserver

#endif  // DEVSERVER_GO_COMPAT_H_

// SPDX-License-Identifier: Apache-2.0
/* cmake/asan_default_options.c
 *
 * Compiled into every executable of a REGISTRY_ASAN build (see the top-level CMakeLists.txt):
 * the defaults AddressSanitizer reads at start-up, before any environment ASAN_OPTIONS (which
 * still override them).
 *
 * intercept_tls_get_addr=0: up to GCC 13, the sanitizer runtime's __tls_get_addr hook guesses a
 * pre-2.25 glibc header in front of a dynamic TLS block whenever the block's address happens to
 * sit 16 bytes past a page boundary, records a garbage range, and LeakSanitizer's exit-time scan
 * then dies with "Tracer caught signal 11" (exit 1) although nothing leaked. Dynamic TLS comes
 * from libraries loaded by dlopen — here the plugin's dependencies (Abseil's random pool,
 * GnuTLS, ...) loaded by registryctl and the plugin tests — so which runs crash depends on heap
 * layout. Without the hook, LeakSanitizer just does not scan dynamic TLS blocks. */
__attribute__((visibility("default"))) const char* __asan_default_options(void);

const char* __asan_default_options(void) { return "intercept_tls_get_addr=0"; }

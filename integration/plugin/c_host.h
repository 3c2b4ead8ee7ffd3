// SPDX-License-Identifier: Apache-2.0
/* integration/plugin/c_host.h
 *
 * What the files of the C host (c_host.c, c_host_locks.c) share: the negotiated table, the
 * failure count and the checks that add to it, and the exercises one file runs for the other.
 * C11 only, as every file of the host. */
#ifndef REGISTRY_INTEGRATION_PLUGIN_C_HOST_H_
#define REGISTRY_INTEGRATION_PLUGIN_C_HOST_H_

#include <stdio.h>

#include "plugin/registry_plugin.h"

/* Filled by RegistryPluginInit in main(); read-only afterwards. */
extern struct RegistryPluginApi g_api;
/* Failed checks so far. */
extern int g_failures;

#define CHECK(cond)                                                                    \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      fprintf(stderr, "c_host: %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
      ++g_failures;                                                                    \
    }                                                                                  \
  } while (0)

/* Checks that a call returned `want`; on failure prints the plugin's message. Releases `error`. */
void ExpectCode(int got, int want, struct RegistryError* error, const char* what, int line);
#define EXPECT_CODE(call, want) ExpectCode((call), (want), &error, #call, __LINE__)

/* The lock entries (c_host_locks.c), each on locks of its own names. */
void ExerciseLock(struct RegistryRepository* repo);
void ExerciseFairLock(struct RegistryRepository* repo);
void ExerciseSemaphore(struct RegistryRepository* repo);
void ExerciseReadWriteLock(struct RegistryRepository* repo);

#endif /* REGISTRY_INTEGRATION_PLUGIN_C_HOST_H_ */

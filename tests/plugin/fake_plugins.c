/* tests/plugin/fake_plugins.c
 *
 * Broken plugins for the loader's failure tests, one per FAKE_PLUGIN_* define:
 *   FAKE_PLUGIN_NO_SYMBOL   exports a near-miss name but no RegistryPluginInit;
 *   FAKE_PLUGIN_FUTURE_ABI  speaks only ABI 2.x and rejects every other major;
 *   FAKE_PLUGIN_INCOMPLETE  accepts 1.x but fills nothing beyond the table header. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/registry_plugin.h"

#if !defined(FAKE_PLUGIN_NO_SYMBOL)
static void ReleaseError(struct RegistryError* error) {
  if (error == NULL) return;
  free(error->message);
  error->message = NULL;
  error->code = REGISTRY_OK;
}
#endif

#if defined(FAKE_PLUGIN_NO_SYMBOL)

REGISTRY_PLUGIN_EXPORT int RegistryPluginInitialize(uint32_t host_abi_version,
                                                    struct RegistryPluginApi* api,
                                                    struct RegistryError* error) {
  (void)host_abi_version;
  (void)api;
  (void)error;
  return REGISTRY_UNIMPLEMENTED;
}

#elif defined(FAKE_PLUGIN_FUTURE_ABI)

REGISTRY_PLUGIN_EXPORT int RegistryPluginInit(uint32_t host_abi_version,
                                              struct RegistryPluginApi* api,
                                              struct RegistryError* error) {
  api->release_error = &ReleaseError;
  if (REGISTRY_PLUGIN_ABI_MAJOR(host_abi_version) == 2) return REGISTRY_OK;
  if (error != NULL) {
    char text[128];
    snprintf(text, sizeof(text), "fake plugin speaks ABI 2.0; the host asked for %u.%u",
             (unsigned)REGISTRY_PLUGIN_ABI_MAJOR(host_abi_version),
             (unsigned)REGISTRY_PLUGIN_ABI_MINOR(host_abi_version));
    error->code = REGISTRY_UNIMPLEMENTED;
    error->message = strdup(text);
  }
  return REGISTRY_UNIMPLEMENTED;
}

#elif defined(FAKE_PLUGIN_INCOMPLETE)

REGISTRY_PLUGIN_EXPORT int RegistryPluginInit(uint32_t host_abi_version,
                                              struct RegistryPluginApi* api,
                                              struct RegistryError* error) {
  (void)error;
  api->release_error = &ReleaseError;
  api->abi_version = host_abi_version;
  api->struct_size =
      (uint32_t)(offsetof(struct RegistryPluginApi, release_error) + sizeof(api->release_error));
  return REGISTRY_OK;
}

#else
#error "define one FAKE_PLUGIN_* macro"
#endif

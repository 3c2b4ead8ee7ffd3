// SPDX-License-Identifier: Apache-2.0
/* tests/plugin/fake_plugins.c
 *
 * Broken plugins for the loader's failure tests, one per FAKE_PLUGIN_* define:
 *   FAKE_PLUGIN_NO_SYMBOL   exports a near-miss name but no RegistryPluginInit;
 *   FAKE_PLUGIN_FUTURE_ABI  speaks only ABI 2.x and rejects every other major;
 *   FAKE_PLUGIN_INCOMPLETE  accepts 1.x but fills nothing beyond the table header;
 *   FAKE_PLUGIN_V1_0        a plugin from before 1.1 (type "Old"): it speaks 1.0 only and fills
 *                           exactly the 1.0 table; create_from_props gives a repository on which
 *                           every call fails with REGISTRY_UNIMPLEMENTED. */
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

#elif defined(FAKE_PLUGIN_V1_0)

/* The only repository this plugin hands out; never dereferenced. */
static char g_repository;

static int Refuse(struct RegistryError* error) {
  if (error != NULL && error->message == NULL) {
    error->code = REGISTRY_UNIMPLEMENTED;
    error->message = strdup("the Old plugin implements nothing");
  }
  return REGISTRY_UNIMPLEMENTED;
}

static int CreateFromYaml(const char* yaml, size_t yaml_len, const char* const* keys,
                          const char* const* values, size_t count, struct RegistryRepository** out,
                          struct RegistryError* error) {
  (void)yaml, (void)yaml_len, (void)keys, (void)values, (void)count, (void)out;
  return Refuse(error);
}
static int CreateFromYamlFile(const char* path, const char* const* keys, const char* const* values,
                              size_t count, struct RegistryRepository** out,
                              struct RegistryError* error) {
  (void)path, (void)keys, (void)values, (void)count, (void)out;
  return Refuse(error);
}
static int CreateFromProps(const char* const* keys, const char* const* values, size_t count,
                           struct RegistryRepository** out, struct RegistryError* error) {
  (void)keys, (void)values, (void)count, (void)error;
  *out = (struct RegistryRepository*)&g_repository;
  return REGISTRY_OK;
}
static int Get(struct RegistryRepository* r, const char* key, char** value, size_t* len,
               bool* found, struct RegistryError* error) {
  (void)r, (void)key, (void)value, (void)len, (void)found;
  return Refuse(error);
}
static void ReleaseValue(char* value) { free(value); }
static int GetChildren(struct RegistryRepository* r, const char* key, char*** children,
                       size_t* count, struct RegistryError* error) {
  (void)r, (void)key, (void)children, (void)count;
  return Refuse(error);
}
static void ReleaseChildren(char** children, size_t count) { (void)children, (void)count; }
static int Exists(struct RegistryRepository* r, const char* key, bool* exists,
                  struct RegistryError* error) {
  (void)r, (void)key, (void)exists;
  return Refuse(error);
}
static int Write(struct RegistryRepository* r, const char* key, const char* value, size_t len,
                 struct RegistryError* error) {
  (void)r, (void)key, (void)value, (void)len;
  return Refuse(error);
}
static int DeleteKey(struct RegistryRepository* r, const char* key, struct RegistryError* error) {
  (void)r, (void)key;
  return Refuse(error);
}
static int Exclusive(struct RegistryRepository* r, const char* key, const char* value, size_t len,
                     bool* created, struct RegistryError* error) {
  (void)r, (void)key, (void)value, (void)len, (void)created;
  return Refuse(error);
}
static int AddListener(struct RegistryRepository* r, RegistryConnectionCallback callback,
                       void* user_data, int64_t* id, struct RegistryError* error) {
  (void)r, (void)callback, (void)user_data, (void)id;
  return Refuse(error);
}
static int RemoveListener(struct RegistryRepository* r, int64_t id, struct RegistryError* error) {
  (void)r, (void)id, (void)error;
  return REGISTRY_OK;
}
static int Close(struct RegistryRepository* r, struct RegistryError* error) {
  (void)r, (void)error;
  return REGISTRY_OK;
}
static void Destroy(struct RegistryRepository* r) { (void)r; }

REGISTRY_PLUGIN_EXPORT int RegistryPluginInit(uint32_t host_abi_version,
                                              struct RegistryPluginApi* api,
                                              struct RegistryError* error) {
  (void)error;
  if (api == NULL || api->struct_size < REGISTRY_PLUGIN_API_SIZE_1_0) {
    return REGISTRY_INVALID_ARGUMENT;
  }
  api->release_error = &ReleaseError;
  if (REGISTRY_PLUGIN_ABI_MAJOR(host_abi_version) != 1) return REGISTRY_UNIMPLEMENTED;
  /* Written as a 1.0 plugin would: its table ended at `destroy`. */
  api->abi_version = REGISTRY_PLUGIN_ABI_VERSION(1, 0);
  api->repository_type = "Old";
  api->plugin_version = "1.0-era";
  api->create_from_yaml = &CreateFromYaml;
  api->create_from_yaml_file = &CreateFromYamlFile;
  api->create_from_props = &CreateFromProps;
  api->get = &Get;
  api->release_value = &ReleaseValue;
  api->get_children = &GetChildren;
  api->release_children = &ReleaseChildren;
  api->exists = &Exists;
  api->persist = &Write;
  api->update = &Write;
  api->delete_key = &DeleteKey;
  api->persist_ephemeral = &Write;
  api->persist_exclusive_ephemeral = &Exclusive;
  api->add_connection_listener = &AddListener;
  api->remove_connection_listener = &RemoveListener;
  api->close = &Close;
  api->destroy = &Destroy;
  api->struct_size = (uint32_t)REGISTRY_PLUGIN_API_SIZE_1_0;
  return REGISTRY_OK;
}

#else
#error "define one FAKE_PLUGIN_* macro"
#endif

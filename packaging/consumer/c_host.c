// SPDX-License-Identifier: Apache-2.0
/* packaging/consumer/c_host.c: a C11 host of the installed plugin, through the C ABI alone.
 *
 *   c_host HOST:PORT
 *
 * Loads the plugin found by find_package (PLUGIN_PATH), then put, get and delete one key on the
 * Consul (or consul-dev-server) at HOST:PORT. Exits 0 when every step gives what it must. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "plugin/registry_plugin.h"

static struct RegistryPluginApi api;

/* Prints the failing step and the plugin's message; returns 1 so main can return it. */
static int Fail(const char* step, struct RegistryError* error) {
  fprintf(stderr, "c_host: %s failed: %s\n", step,
          error->message != NULL ? error->message : "(no message)");
  if (api.release_error != NULL) api.release_error(error);
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s HOST:PORT\n", argv[0]);
    return 2;
  }
  /* RTLD_NODELETE as host/loader.cc: the plugin's threads may outlive a dlclose. */
  void* library = dlopen(PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (library == NULL) {
    fprintf(stderr, "c_host: dlopen %s: %s\n", PLUGIN_PATH, dlerror());
    return 1;
  }
  RegistryPluginInitFunc init = NULL;
  *(void**)(&init) = dlsym(library, REGISTRY_PLUGIN_INIT_SYMBOL); /* POSIX's cast */
  struct RegistryError error = {0, NULL};
  if (init == NULL) {
    fprintf(stderr, "c_host: %s has no %s\n", PLUGIN_PATH, REGISTRY_PLUGIN_INIT_SYMBOL);
    return 1;
  }
  memset(&api, 0, sizeof(api));
  api.struct_size = sizeof(api);
  if (init(REGISTRY_PLUGIN_ABI_VERSION_CURRENT, &api, &error) != REGISTRY_OK) {
    return Fail("RegistryPluginInit", &error);
  }

  const char* keys[] = {"namespace", "server-lists"};
  const char* values[] = {"package_test_c", argv[1]};
  struct RegistryRepository* repo = NULL;
  if (api.create_from_props(keys, values, 2, &repo, &error) != REGISTRY_OK) {
    return Fail("create_from_props", &error);
  }
  int failed = 0;
  if (api.persist(repo, "/metadata/db", "c-value", 7, &error) != REGISTRY_OK) {
    failed = Fail("persist", &error);
  }
  char* value = NULL;
  size_t value_len = 0;
  bool found = false;
  if (!failed && api.get(repo, "/metadata/db", &value, &value_len, &found, &error) != REGISTRY_OK) {
    failed = Fail("get", &error);
  } else if (!failed && (!found || value_len != 7 || memcmp(value, "c-value", 7) != 0)) {
    fprintf(stderr, "c_host: get did not read back what persist wrote\n");
    failed = 1;
  }
  api.release_value(value);
  if (!failed && api.delete_key(repo, "/metadata/db", &error) != REGISTRY_OK) {
    failed = Fail("delete_key", &error);
  }
  found = true;
  if (!failed && api.get(repo, "/metadata/db", &value, &value_len, &found, &error) != REGISTRY_OK) {
    failed = Fail("get after delete", &error);
  } else if (!failed && found) {
    fprintf(stderr, "c_host: the key is still there after delete_key\n");
    failed = 1;
  }
  if (api.close(repo, &error) != REGISTRY_OK && !failed) failed = Fail("close", &error);
  api.destroy(repo);
  if (!failed) printf("c_host: put/get/delete through the C ABI of %s: ok\n", PLUGIN_PATH);
  return failed;
}

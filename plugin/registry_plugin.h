/* plugin/registry_plugin.h
 *
 * The registry plugin C ABI (version 1.0). A plugin is a shared library that exports exactly one
 * symbol, RegistryPluginInit. A host dlopen()s the library, looks the symbol up and calls it with
 * the ABI version it speaks; the plugin fills a table of C function pointers (RegistryPluginApi)
 * through which the host creates and uses repositories. Only C types cross the boundary, so a
 * host may be written in C (C11) or C++ and built with another compiler or standard library.
 *
 * Versions: REGISTRY_PLUGIN_ABI_VERSION(major, minor) packs both into a uint32_t. Within a major
 * version the table is append-only: a later minor adds entries at its end and never changes or
 * removes one, so a host and a plugin of different minors still agree on every entry both know.
 * A different major is a different, incompatible ABI.
 *
 * Negotiation (RegistryPluginInit):
 *   - The host zeroes a RegistryPluginApi, sets struct_size = sizeof(struct RegistryPluginApi)
 *     of its own header and passes the highest version it speaks.
 *   - The plugin fails with REGISTRY_UNIMPLEMENTED unless the majors match. Otherwise it sets
 *     abi_version to (major, min(host minor, plugin minor)), fills only the entries of that minor
 *     that fit in the host's struct_size, and lowers struct_size to the bytes it filled.
 *   - An entry is usable iff REGISTRY_PLUGIN_API_HAS(api, entry) and it is non-NULL.
 *
 * Errors: every function that can fail returns an int code mirroring absl::StatusCode
 * (REGISTRY_OK is 0) and, when `error` is non-NULL and the call fails, stores the code and a
 * malloc'd message in it. The host must release a filled error with api->release_error (which
 * is set by RegistryPluginInit even when it fails). Absence of a key is not an error: get and
 * exists report it through an out parameter. No C++ exception ever leaves the plugin.
 *
 * Ownership: everything a function hands out (error messages, values, child arrays, repository
 * handles) is allocated by the plugin and released only through the matching table function.
 * Inputs are borrowed for the duration of the call.
 *
 * Thread safety: RegistryPluginInit may be called more than once, from any thread; every
 * repository function may be called concurrently on one handle, except `destroy`, which must
 * not race with any other call on that handle.
 */
#ifndef REGISTRY_PLUGIN_REGISTRY_PLUGIN_H_
#define REGISTRY_PLUGIN_REGISTRY_PLUGIN_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Only the plugin build defines REGISTRY_PLUGIN_BUILDING; hosts see a plain declaration. */
#if defined(REGISTRY_PLUGIN_BUILDING)
#define REGISTRY_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define REGISTRY_PLUGIN_EXPORT
#endif

#define REGISTRY_PLUGIN_ABI_VERSION(major, minor) \
  ((uint32_t)(((uint32_t)(major) << 16) | ((uint32_t)(minor)&0xFFFFu)))
#define REGISTRY_PLUGIN_ABI_MAJOR(version) ((uint32_t)(version) >> 16)
#define REGISTRY_PLUGIN_ABI_MINOR(version) ((uint32_t)(version)&0xFFFFu)

/* The version this header describes. */
#define REGISTRY_PLUGIN_ABI_VERSION_MAJOR 1
#define REGISTRY_PLUGIN_ABI_VERSION_MINOR 0
#define REGISTRY_PLUGIN_ABI_VERSION_CURRENT \
  REGISTRY_PLUGIN_ABI_VERSION(REGISTRY_PLUGIN_ABI_VERSION_MAJOR, REGISTRY_PLUGIN_ABI_VERSION_MINOR)

/* The name a host passes to dlsym(). */
#define REGISTRY_PLUGIN_INIT_SYMBOL "RegistryPluginInit"

/* Status codes: the values of absl::StatusCode. */
enum RegistryStatusCode {
  REGISTRY_OK = 0,
  REGISTRY_CANCELLED = 1,
  REGISTRY_UNKNOWN = 2,
  REGISTRY_INVALID_ARGUMENT = 3,
  REGISTRY_DEADLINE_EXCEEDED = 4,
  REGISTRY_NOT_FOUND = 5,
  REGISTRY_ALREADY_EXISTS = 6,
  REGISTRY_PERMISSION_DENIED = 7,
  REGISTRY_RESOURCE_EXHAUSTED = 8,
  REGISTRY_FAILED_PRECONDITION = 9,
  REGISTRY_ABORTED = 10,
  REGISTRY_OUT_OF_RANGE = 11,
  REGISTRY_UNIMPLEMENTED = 12,
  REGISTRY_INTERNAL = 13,
  REGISTRY_UNAVAILABLE = 14,
  REGISTRY_DATA_LOSS = 15,
  REGISTRY_UNAUTHENTICATED = 16
};

/* Connection states reported to connection listeners (registry::ConnectionState). */
enum RegistryConnectionState {
  REGISTRY_CONNECTION_CONNECTED = 0,  /* first session established */
  REGISTRY_CONNECTION_SUSPENDED = 1,  /* the store stopped answering; ephemerals may live */
  REGISTRY_CONNECTION_LOST = 2,       /* the session is gone, with its ephemeral keys */
  REGISTRY_CONNECTION_RECONNECTED = 3 /* new session; every ephemeral key persisted again */
};

/* A failed call's details. The host zero-initializes it before passing it; after a failure
 * `message` is a NUL-terminated malloc'd string owned by the plugin until the host calls
 * api->release_error, which frees it and zeroes the struct (releasing a zeroed error is a
 * no-op). A plugin never overwrites a filled error: the host releases it before reuse. */
struct RegistryError {
  int32_t code;  /* the code the function returned */
  char* message; /* names the key, prop or value at fault */
};

/* An open repository: the C face of registry::Repository. Opaque to the host. */
struct RegistryRepository;

/* Called from a plugin background thread, one call at a time per repository, with a
 * RegistryConnectionState. It must return promptly, must not throw or longjmp, and must not call
 * remove_connection_listener, close or destroy on the same repository. */
typedef void (*RegistryConnectionCallback)(int32_t state, void* user_data);

struct RegistryPluginApi {
  /* ---- Header: the same in every major version. ---- */
  uint32_t struct_size; /* in: the host's sizeof(RegistryPluginApi); out: bytes filled */
  uint32_t abi_version; /* out: the negotiated version */
  /* Frees error->message and zeroes *error. Set even when RegistryPluginInit fails. */
  void (*release_error)(struct RegistryError* error);

  /* ---- 1.0 ---- */
  const char* repository_type; /* static, e.g. "Consul": the `type:` this plugin serves */
  const char* plugin_version;  /* static, e.g. "0.1.0" */

  /* Creates a repository from registry YAML text (`yaml_len` bytes; a `mode:` or `repository:`
   * block), then applies `override_count` props (keys[i] = values[i], as written under
   * `props:`) over it, e.g. from command-line flags; counts of 0 may pass NULL arrays. Returns
   * REGISTRY_INVALID_ARGUMENT naming the key, value and line for bad config; the repository
   * type must be the plugin's. On success *out is a handle for `destroy`. */
  int (*create_from_yaml)(const char* yaml, size_t yaml_len, const char* const* override_keys,
                          const char* const* override_values, size_t override_count,
                          struct RegistryRepository** out, struct RegistryError* error);
  /* As create_from_yaml, reading the YAML file at `path` (relative paths in it are taken from
   * its directory; messages start with the path). */
  int (*create_from_yaml_file)(const char* path, const char* const* override_keys,
                               const char* const* override_values, size_t override_count,
                               struct RegistryRepository** out, struct RegistryError* error);
  /* Creates a repository from a props map alone: the keys of the YAML `props:` block plus the
   * optional "type" and "overwrite". */
  int (*create_from_props)(const char* const* keys, const char* const* values, size_t count,
                           struct RegistryRepository** out, struct RegistryError* error);

  /* Keys are NUL-terminated '/'-separated paths; values are byte buffers (`value` may be NULL
   * when `value_len` is 0). A malformed key fails with REGISTRY_INVALID_ARGUMENT naming it. */

  /* Reads `key`. Absent: returns REGISTRY_OK with *found = false and *value = NULL. Present:
   * *found = true and *value is a malloc'd buffer of *value_len bytes plus a terminating NUL
   * (not counted), released with release_value. */
  int (*get)(struct RegistryRepository* repository, const char* key, char** value,
             size_t* value_len, bool* found, struct RegistryError* error);
  void (*release_value)(char* value); /* NULL is a no-op */

  /* Stores in *children a malloc'd array of *count malloc'd NUL-terminated names (not paths) of
   * the direct children of `key`, sorted; released with release_children. No children: *count
   * is 0 and *children may be NULL. */
  int (*get_children)(struct RegistryRepository* repository, const char* key, char*** children,
                      size_t* count, struct RegistryError* error);
  void (*release_children)(char** children, size_t count); /* NULL is a no-op */

  /* Sets *exists to whether `key` itself holds a value. */
  int (*exists)(struct RegistryRepository* repository, const char* key, bool* exists,
                struct RegistryError* error);
  /* Creates or overwrites a persistent key. */
  int (*persist)(struct RegistryRepository* repository, const char* key, const char* value,
                 size_t value_len, struct RegistryError* error);
  /* Overwrites an existing key; REGISTRY_NOT_FOUND if it does not exist. */
  int (*update)(struct RegistryRepository* repository, const char* key, const char* value,
                size_t value_len, struct RegistryError* error);
  /* Deletes `key` and its subtree; an absent key is not an error. */
  int (*delete_key)(struct RegistryRepository* repository, const char* key,
                    struct RegistryError* error);
  /* Sets `key` bound to this repository's session: it vanishes when the repository closes or
   * its session is lost for good. */
  int (*persist_ephemeral)(struct RegistryRepository* repository, const char* key,
                           const char* value, size_t value_len, struct RegistryError* error);
  /* Creates `key` bound to this repository unless it exists; *created is true iff this call
   * created it. Across processes at most one concurrent caller gets true. */
  int (*persist_exclusive_ephemeral)(struct RegistryRepository* repository, const char* key,
                                     const char* value, size_t value_len, bool* created,
                                     struct RegistryError* error);

  /* Registers `callback` (see RegistryConnectionCallback) and stores an id in *listener_id. */
  int (*add_connection_listener)(struct RegistryRepository* repository,
                                 RegistryConnectionCallback callback, void* user_data,
                                 int64_t* listener_id, struct RegistryError* error);
  /* After it returns, the listener is never called again. An unknown id is not an error. */
  int (*remove_connection_listener)(struct RegistryRepository* repository, int64_t listener_id,
                                    struct RegistryError* error);

  /* Destroys the session (ephemeral keys vanish at once) and stops background work; later calls
   * fail with REGISTRY_FAILED_PRECONDITION. Safe to call twice. */
  int (*close)(struct RegistryRepository* repository, struct RegistryError* error);
  /* Closes the repository if needed and frees the handle. NULL is a no-op. */
  void (*destroy)(struct RegistryRepository* repository);

  /* ---- 1.1 (planned, appended here): watches. add_data_listener(repository, key, callback
   * receiving ADDED/UPDATED/DELETED with key and value, user_data, &listener_id, error) and
   * remove_data_listener(repository, listener_id, error), with the callback rules above. ----
   * ---- 1.2 (planned, appended after 1.1): locks. A lock handle per name with lock, try_lock
   * (timeout in milliseconds), unlock, a lock-lost callback and release_lock. ---- */
};

/* Every 1.0 entry fits in a table of at least this many bytes. */
#define REGISTRY_PLUGIN_API_SIZE_1_0 \
  (offsetof(struct RegistryPluginApi, destroy) + sizeof(void (*)(struct RegistryRepository*)))

/* True iff the negotiated table holds `member`. */
#define REGISTRY_PLUGIN_API_HAS(api, member) \
  (offsetof(struct RegistryPluginApi, member) + sizeof((api)->member) <= (api)->struct_size)

/* The plugin entry point. `host_abi_version` is REGISTRY_PLUGIN_ABI_VERSION_CURRENT of the
 * host's header. Returns REGISTRY_OK with the table filled, REGISTRY_UNIMPLEMENTED (message
 * naming both versions) for a major it cannot speak, or REGISTRY_INVALID_ARGUMENT without
 * touching `error` for a NULL `api` or a struct_size below the header (there would be no
 * release_error to free a message with). */
REGISTRY_PLUGIN_EXPORT int RegistryPluginInit(uint32_t host_abi_version,
                                              struct RegistryPluginApi* api,
                                              struct RegistryError* error);
typedef int (*RegistryPluginInitFunc)(uint32_t host_abi_version, struct RegistryPluginApi* api,
                                      struct RegistryError* error);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* REGISTRY_PLUGIN_REGISTRY_PLUGIN_H_ */

// SPDX-License-Identifier: Apache-2.0
/* plugin/registry_plugin.h
 *
 * The registry plugin C ABI (version 1.8). A plugin is a shared library that exports exactly one
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
 *     abi_version to (major, min(host minor, plugin minor)), fills the entries of every minor up
 *     to that one that fit in the host's struct_size, and lowers struct_size to the bytes it
 *     filled. It never writes past the host's struct_size.
 *   - An entry is usable iff REGISTRY_PLUGIN_API_HAS(api, entry) and it is non-NULL. So a host
 *     built for 1.0 keeps working with a 1.2 plugin (its table ends before the 1.1 entries), and
 *     a 1.2 host loading a 1.0 plugin gets abi_version 1.0 and a 1.0-sized struct_size, and must
 *     not call the watch or lock entries.
 *
 * Errors: every function that can fail returns an int code mirroring absl::StatusCode
 * (REGISTRY_OK is 0) and, when `error` is non-NULL and the call fails, stores the code and a
 * malloc'd message in it. The host must release a filled error with api->release_error (which
 * is set by RegistryPluginInit even when it fails). Absence of a key is not an error: get and
 * exists report it through an out parameter. No C++ exception ever leaves the plugin.
 *
 * Ownership: everything a function hands out (error messages, values, child arrays, repository
 * and lock handles) is allocated by the plugin and released only through the matching table
 * function. Inputs are borrowed for the duration of the call.
 *
 * Thread safety: RegistryPluginInit may be called more than once, from any thread; every
 * repository function may be called concurrently on one handle, except `destroy`, which must
 * not race with any other call on that handle; likewise every lock function on one lock handle,
 * except `release_lock`.
 */
#ifndef REGISTRY_PLUGIN_REGISTRY_PLUGIN_H_
#define REGISTRY_PLUGIN_REGISTRY_PLUGIN_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plugin/registry_plugin_types.h" /* codes, errors, events, callbacks, samples, entries */

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
#define REGISTRY_PLUGIN_ABI_VERSION_MINOR 8
#define REGISTRY_PLUGIN_ABI_VERSION_CURRENT \
  REGISTRY_PLUGIN_ABI_VERSION(REGISTRY_PLUGIN_ABI_VERSION_MAJOR, REGISTRY_PLUGIN_ABI_VERSION_MINOR)

/* What each minor version added (see the sections of RegistryPluginApi). */
#define REGISTRY_PLUGIN_ABI_MINOR_WATCH 1           /* add_data_listener, remove_data_listener */
#define REGISTRY_PLUGIN_ABI_MINOR_LOCK 2            /* get_lock ... delete_if_held */
#define REGISTRY_PLUGIN_ABI_MINOR_FAIR_LOCK 3       /* get_fair_lock */
#define REGISTRY_PLUGIN_ABI_MINOR_SEMAPHORE 4       /* get_semaphore */
#define REGISTRY_PLUGIN_ABI_MINOR_READ_WRITE_LOCK 5 /* get_read_write_lock */
#define REGISTRY_PLUGIN_ABI_MINOR_LOG 6             /* set_log_sink */
#define REGISTRY_PLUGIN_ABI_MINOR_METRICS 7         /* metrics_text, visit_metrics */
#define REGISTRY_PLUGIN_ABI_MINOR_PERSIST_BATCH 7   /* persist_batch */
#define REGISTRY_PLUGIN_ABI_MINOR_EXPORT 8          /* list_entries ... check_batch */

/* The largest `limit` get_semaphore accepts: a semaphore's record in the store names every
 * holder, and must stay well below the store's value size limit. */
#define REGISTRY_PLUGIN_SEMAPHORE_LIMIT_MAX 1024

/* The name a host passes to dlsym(). */
#define REGISTRY_PLUGIN_INIT_SYMBOL "RegistryPluginInit"

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

  /* Keys are NUL-terminated '/'-separated UTF-8 paths; values are byte buffers (`value` may be
   * NULL when `value_len` is 0). A malformed key (including one that is not valid UTF-8) fails
   * with REGISTRY_INVALID_ARGUMENT naming it. */

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
   * fail with REGISTRY_FAILED_PRECONDITION. Safe to call twice. From 1.1: no data callback runs
   * after it returns (called from inside one, that call finishes). From 1.2: lock waiters return
   * REGISTRY_FAILED_PRECONDITION and held locks are reported lost. */
  int (*close)(struct RegistryRepository* repository, struct RegistryError* error);
  /* Closes the repository if needed and frees the handle. NULL is a no-op. Lock handles of the
   * repository stay valid until release_lock (see there). */
  void (*destroy)(struct RegistryRepository* repository);

  /* ---- 1.1: watches (REGISTRY_PLUGIN_ABI_MINOR_WATCH) ---- */

  /* Watches `key` and every key below it ("/a" covers "/a" and "/a/b/c", never "/ab"; "/" the
   * whole namespace): `callback` gets an ADDED, UPDATED or DELETED event for each change, with
   * `user_data`. Returns once the subtree has been read: every change applied after it returns is
   * reported; the keys read are reported first, as ADDED, only with
   * REGISTRY_WATCH_REPLAY_EXISTING in `options`. Rapid writes to one key may be coalesced, but
   * once writes stop the events have brought the watcher's view to the store's state, even
   * across errors and server restarts. Stores an id for remove_data_listener in *watch_id.
   * Several watches may cover the same keys; each gets every event. Errors:
   * REGISTRY_INVALID_ARGUMENT for a malformed key or unknown option bits;
   * REGISTRY_FAILED_PRECONDITION after close; REGISTRY_UNAVAILABLE when the subtree could not be
   * read; REGISTRY_UNIMPLEMENTED when the repository cannot watch. Nothing is registered on
   * error. */
  int (*add_data_listener)(struct RegistryRepository* repository, const char* key, uint32_t options,
                           RegistryDataCallback callback, void* user_data, int64_t* watch_id,
                           struct RegistryError* error);
  /* Stops watch `watch_id`. When it returns the callback is not running and is never called
   * again, except when called from inside that watch's own callback: then the current call
   * finishes and no other follows. An unknown or already removed id is not an error. After
   * close or destroy no callback runs either. */
  int (*remove_data_listener)(struct RegistryRepository* repository, int64_t watch_id,
                              struct RegistryError* error);

  /* ---- 1.2: locks (REGISTRY_PLUGIN_ABI_MINOR_LOCK) ----
   * Two tiers: one process-local lock per name and repository handle, shared by the threads of
   * the host, then the store's lock held by the repository's session. Locks are re-entrant per
   * thread: the thread holding a lock may lock it again (no request is made) and must unlock it
   * as many times; only that thread may unlock it. */

  /* Stores in *out a handle for the lock called `name` ('/'-separated segments, e.g.
   * "schema/sharding_db"; a leading '/' is ignored). Handles for the same name share one lock.
   * No request is made. Release the handle with release_lock. Errors: REGISTRY_INVALID_ARGUMENT
   * naming a bad name; REGISTRY_FAILED_PRECONDITION after close; REGISTRY_UNIMPLEMENTED when the
   * repository has no locks. */
  int (*get_lock)(struct RegistryRepository* repository, const char* name,
                  struct RegistryLock** out, struct RegistryError* error);
  /* Removes the lost callbacks added through `lock` (as remove_lock_lost_listener) and frees
   * the handle; a hold of the calling thread is not released. NULL is a no-op. May be called
   * after its repository was destroyed; every other call on such a handle fails with
   * REGISTRY_FAILED_PRECONDITION. */
  void (*release_lock)(struct RegistryLock* lock);
  /* Blocks until the calling thread holds the lock. Errors (nothing held afterwards):
   * REGISTRY_FAILED_PRECONDITION when the repository is or gets closed (waiters return at once);
   * REGISTRY_UNAVAILABLE when the store stayed unreachable; REGISTRY_ABORTED on re-entry into a
   * hold that was lost (unlock it first). */
  int (*lock)(struct RegistryLock* lock, struct RegistryError* error);
  /* As lock, but gives up once `timeout_ms` milliseconds have passed (one deadline for both
   * tiers; never earlier): *acquired is true iff the lock is now held. 0 or less makes a single
   * attempt that does not wait. After *acquired == false or an error nothing is held. */
  int (*try_lock)(struct RegistryLock* lock, int64_t timeout_ms, bool* acquired,
                  struct RegistryError* error);
  /* Ends one hold of the calling thread; the last one releases the store's lock, then the local
   * one. REGISTRY_FAILED_PRECONDITION, changing nothing, if the calling thread does not hold it.
   * The hold always ends locally; another error means the store may keep the lock bound to the
   * repository's session until that session ends. */
  int (*unlock)(struct RegistryLock* lock, struct RegistryError* error);
  /* Sets *held to whether the calling thread holds the lock. */
  int (*lock_is_held)(struct RegistryLock* lock, bool* held, struct RegistryError* error);
  /* Sets *lost to whether the current hold (or, when none, the most recent one) was lost. */
  int (*lock_is_lost)(struct RegistryLock* lock, bool* lost, struct RegistryError* error);
  /* Registers `callback` (see RegistryLockLostCallback) for every later lost hold of the lock
   * and stores an id in *listener_id. */
  int (*add_lock_lost_listener)(struct RegistryLock* lock, RegistryLockLostCallback callback,
                                void* user_data, int64_t* listener_id, struct RegistryError* error);
  /* After it returns the callback is not running and not called again, unless called from
   * inside that callback (the current call then finishes). An unknown id is not an error. */
  int (*remove_lock_lost_listener)(struct RegistryLock* lock, int64_t listener_id,
                                   struct RegistryError* error);
  /* Fenced writes: set `key` (as persist) or delete it with its subtree (as delete_key) iff the
   * repository holds the lock at that moment, as one atomic store operation, so they never
   * write once the store has taken the lock away, noticed or not. The calling thread must hold
   * the lock. Errors: REGISTRY_FAILED_PRECONDITION if it does not; REGISTRY_ABORTED if the hold
   * was lost; as persist / delete_key otherwise. */
  int (*persist_if_held)(struct RegistryLock* lock, const char* key, const char* value,
                         size_t value_len, struct RegistryError* error);
  int (*delete_if_held)(struct RegistryLock* lock, const char* key, struct RegistryError* error);

  /* ---- 1.3: fair locks (REGISTRY_PLUGIN_ABI_MINOR_FAIR_LOCK) ---- */

  /* As get_lock, for the fair lock called `name`: across repositories (processes) it goes to the
   * contenders in the order they asked for it, and a release wakes only the next one. A fair lock
   * and a lock of the same name are two different locks. The handle is used and released with
   * the 1.2 lock entries, with the same semantics. */
  int (*get_fair_lock)(struct RegistryRepository* repository, const char* name,
                       struct RegistryLock** out, struct RegistryError* error);

  /* ---- 1.4: semaphores (REGISTRY_PLUGIN_ABI_MINOR_SEMAPHORE) ---- */

  /* As get_lock, for the semaphore called `name` with `limit` permits (1 to
   * REGISTRY_PLUGIN_SEMAPHORE_LIMIT_MAX): across repositories (processes) at most `limit`
   * threads hold it at once. The handle is used and released with the 1.2 lock entries: lock and
   * try_lock take a permit for the calling thread (re-entry counts, as for a lock), unlock gives
   * it back; loss, lost callbacks and fenced writes are as for a lock. A semaphore and a lock of
   * the same name are different. Errors: as get_lock; REGISTRY_INVALID_ARGUMENT naming a limit
   * out of range; REGISTRY_FAILED_PRECONDITION if the repository already has the semaphore with
   * another limit. A limit that disagrees with the one the store has for `name` (while it has
   * holders) fails lock and try_lock with REGISTRY_FAILED_PRECONDITION naming both. */
  int (*get_semaphore)(struct RegistryRepository* repository, const char* name, int32_t limit,
                       struct RegistryLock** out, struct RegistryError* error);

  /* ---- 1.5: read/write locks (REGISTRY_PLUGIN_ABI_MINOR_READ_WRITE_LOCK) ---- */

  /* As get_lock, for one side of the read/write lock called `name`: `write` 0 gives the read
   * side, 1 the write side. Across repositories (processes) any number of threads hold the read
   * side at once, or one thread holds the write side; a writer waiting for the holders ahead of
   * it holds back the readers that come after it, so writers are not starved. The handle is used
   * and released with the 1.2 lock entries: lock and try_lock take the side for the calling
   * thread (re-entry counts, as for a lock), unlock gives it back; loss, lost callbacks and
   * fenced writes are as for a lock. A thread holding one side that asks for the other fails at
   * once with REGISTRY_FAILED_PRECONDITION (it would wait for itself): unlock first. A
   * read/write lock and a lock of the same name are different. Errors: as get_lock;
   * REGISTRY_INVALID_ARGUMENT naming a `write` other than 0 or 1. */
  int (*get_read_write_lock)(struct RegistryRepository* repository, const char* name, int32_t write,
                             struct RegistryLock** out, struct RegistryError* error);

  /* ---- 1.6: logging (REGISTRY_PLUGIN_ABI_MINOR_LOG) ---- */

  /* Sends the plugin's log records (every repository's) at `min_level` (a RegistryLogLevel) or
   * more severe to `sink` instead of stderr; NULL goes back to stderr, at warn unless a YAML
   * `logLevel` said otherwise. The sink is called on one plugin thread that does no network I/O,
   * one record at a time, in order; the strings live for the call only, and secrets (the ACL
   * token) are already "<redacted>". It must not throw or longjmp; it may call set_log_sink.
   * Replacing a sink returns after the old sink's last call, so its user_data may be freed then
   * (called from inside the sink: at once). A sink that falls 4096 records behind loses the
   * newer ones, and a warn record says how many. Errors: REGISTRY_INVALID_ARGUMENT naming a
   * min_level out of range. */
  int (*set_log_sink)(RegistryLogCallback sink, void* user_data, int32_t min_level,
                      struct RegistryError* error);

  /* ---- 1.7: metrics (REGISTRY_PLUGIN_ABI_MINOR_METRICS) ----
   * The plugin's metrics (every repository's in the process, as for the log): requests by
   * endpoint and outcome and their durations, sessions, watches, locks and connection states.
   * Counters start at zero when the plugin is loaded; every family is listed from the start. */

  /* Stores in *text a malloc'd snapshot in Prometheus' text exposition format (version 0.0.4:
   * "# HELP" and "# TYPE" lines, then one sample per line; names start with "registry_consul_")
   * of *text_len bytes plus a NUL (not counted), released with release_value. */
  int (*metrics_text)(char** text, size_t* text_len, struct RegistryError* error);
  /* Calls `visit` once per sample that metrics_text would list, in its order, with the values
   * read now, so a host reads them without parsing text. Errors: REGISTRY_INVALID_ARGUMENT for a
   * NULL visit. */
  int (*visit_metrics)(RegistryMetricCallback visit, void* user_data, struct RegistryError* error);

  /* ---- 1.7: batches (REGISTRY_PLUGIN_ABI_MINOR_PERSIST_BATCH) ---- */

  /* Persists `count` keys, in order, as persist would (keys[i] = values[i] of value_lens[i]
   * bytes; a later entry of the same key wins), in as few store transactions as the store
   * accepts (the YAML prop txnMaxOperations: one per key), each all or nothing. Every key and
   * value is checked first: REGISTRY_INVALID_ARGUMENT naming the first bad one, and nothing is
   * written. Otherwise *written (may be NULL) counts the entries known to be written, always a
   * prefix; on an error its message names the first entry not written, and with
   * REGISTRY_UNAVAILABLE some entries past *written may be written too. count 0 writes nothing
   * and may pass NULL arrays. */
  int (*persist_batch)(struct RegistryRepository* repository, const char* const* keys,
                       const char* const* values, const size_t* value_lens, size_t count,
                       size_t* written, struct RegistryError* error);

  /* ---- 1.8: export and import (REGISTRY_PLUGIN_ABI_MINOR_EXPORT) ----
   * What a backup needs beyond get and persist_batch: every key of a subtree with its raw value,
   * its store flags and whether it is ephemeral (so a backup can leave out the keys of live
   * instances), the store's name of each key (so a backup reads as the store's own dumps do),
   * and the checks of persist_batch without the writes (so a restore can be tried first). */

  /* Calls `visit` once per key of `key`'s subtree ("/a" covers "/a" and "/a/b/c", never "/ab";
   * "/" the whole namespace), in key order, with a RegistryEntry valid during the call only, on
   * the calling thread, after the whole subtree has been read in one consistent read of the
   * store. Ephemeral keys are listed too, with `ephemeral` set. Only repository keys are listed:
   * what the store holds under the namespace that no repository key names (the plugin's own lock
   * state) is left out. Nothing is visited on error. Errors: REGISTRY_INVALID_ARGUMENT for a
   * malformed key or a NULL visit; REGISTRY_FAILED_PRECONDITION after close; REGISTRY_UNAVAILABLE
   * when the subtree could not be read. */
  int (*list_entries)(struct RegistryRepository* repository, const char* key,
                      RegistryEntryCallback visit, void* user_data, struct RegistryError* error);
  /* Stores in *prefix the store's name of the namespace root, a malloc'd string of *prefix_len
   * bytes plus a NUL (not counted), released with release_value: the store names repository key
   * "/a/b" prefix + "a/b" (Consul: "<namespace>/a/b", so the prefix is "<namespace>/"). */
  int (*store_key_prefix)(struct RegistryRepository* repository, char** prefix, size_t* prefix_len,
                          struct RegistryError* error);
  /* Checks `count` entries exactly as persist_batch checks them before writing anything (same
   * arrays), and writes nothing. REGISTRY_OK when persist_batch would accept every one; else
   * REGISTRY_INVALID_ARGUMENT naming the first bad one. *bad_index (may be NULL) is the index of
   * the entry at fault, or `count` when no entry is (every entry is good, or the error is no
   * entry's, e.g. a NULL array). count 0 may pass NULL arrays. */
  int (*check_batch)(struct RegistryRepository* repository, const char* const* keys,
                     const char* const* values, const size_t* value_lens, size_t count,
                     size_t* bad_index, struct RegistryError* error);

  /* Later minors append here. */
};

/* Every entry of minor 0 to 8 fits in a table of at least this many bytes. */
#define REGISTRY_PLUGIN_API_SIZE_1_0 \
  (offsetof(struct RegistryPluginApi, destroy) + sizeof(void (*)(struct RegistryRepository*)))
#define REGISTRY_PLUGIN_API_SIZE_1_1 \
  (offsetof(struct RegistryPluginApi, remove_data_listener) + sizeof(void (*)(void)))
#define REGISTRY_PLUGIN_API_SIZE_1_2 \
  (offsetof(struct RegistryPluginApi, delete_if_held) + sizeof(void (*)(void)))
#define REGISTRY_PLUGIN_API_SIZE_1_3 \
  (offsetof(struct RegistryPluginApi, get_fair_lock) + sizeof(void (*)(void)))
#define REGISTRY_PLUGIN_API_SIZE_1_4 \
  (offsetof(struct RegistryPluginApi, get_semaphore) + sizeof(void (*)(void)))
#define REGISTRY_PLUGIN_API_SIZE_1_5 \
  (offsetof(struct RegistryPluginApi, get_read_write_lock) + sizeof(void (*)(void)))
#define REGISTRY_PLUGIN_API_SIZE_1_6 \
  (offsetof(struct RegistryPluginApi, set_log_sink) + sizeof(void (*)(void)))
#define REGISTRY_PLUGIN_API_SIZE_1_7 \
  (offsetof(struct RegistryPluginApi, persist_batch) + sizeof(void (*)(void)))
#define REGISTRY_PLUGIN_API_SIZE_1_8 \
  (offsetof(struct RegistryPluginApi, check_batch) + sizeof(void (*)(void)))

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

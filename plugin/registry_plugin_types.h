// SPDX-License-Identifier: Apache-2.0
/* plugin/registry_plugin_types.h
 *
 * The C types of the registry plugin ABI that are not the function table: status codes,
 * connection states, errors, events, callbacks, log levels, metric samples and stored entries.
 * Included by plugin/registry_plugin.h, which a host includes instead of this file; every comment
 * there (versions, errors, ownership, thread safety) applies here.
 */
#ifndef REGISTRY_PLUGIN_REGISTRY_PLUGIN_TYPES_H_
#define REGISTRY_PLUGIN_REGISTRY_PLUGIN_TYPES_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

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
 * remove_connection_listener, close or destroy on the same repository. The thread never renews
 * the session, so the callback may call any other table function, even one that waits for a new
 * session during LOST (persist_ephemeral, lock). When LOST arrives, every lock held with the lost
 * session already reports lost. */
typedef void (*RegistryConnectionCallback)(int32_t state, void* user_data);

/* ---- 1.1: watches ---- */

/* What happened to a watched key (registry::DataChangedEvent::Type). */
enum RegistryDataEventType {
  REGISTRY_DATA_ADDED = 0,   /* the key appeared; value: its value */
  REGISTRY_DATA_UPDATED = 1, /* the key changed and is still present; value: the new value */
  REGISTRY_DATA_DELETED = 2  /* the key is gone; value: the last value reported, if known */
};

/* One change, valid only for the duration of the callback that receives it. A later minor may
 * append fields: read only those that fit in struct_size. */
struct RegistryDataEvent {
  uint32_t struct_size; /* sizeof(struct RegistryDataEvent) of the plugin */
  int32_t type;         /* a RegistryDataEventType */
  const char* key;      /* NUL-terminated repository key, e.g. "/metadata/db" */
  /* The value's bytes, followed by a NUL that value_len does not count. When value_known is
   * false (a DELETED key whose last value the plugin does not know) value is NULL and value_len
   * is 0; an empty value is value_known with value_len 0. */
  const char* value;
  size_t value_len;
  bool value_known;
  uint64_t flags; /* the entry's flags (the last known ones for DELETED) */
};

/* add_data_listener options, OR-ed together. */
#define REGISTRY_WATCH_REPLAY_EXISTING 0x1u /* report every existing key as ADDED first */

/* Receives the events of one watch. Calls for one watch never overlap, run on a plugin thread
 * (never one doing network I/O) and, for each key, follow the order in which the store applied
 * the changes; calls for different watches may run concurrently. A callback must not throw or
 * longjmp, should return promptly, and must not call destroy. It may call any other function
 * of the table, including remove_data_listener for its own watch (it is then not called again
 * once it returns) and close. Removing another watch waits for that watch's current call, so two
 * callbacks must never remove each other's watch at the same time. */
typedef void (*RegistryDataCallback)(const struct RegistryDataEvent* event, void* user_data);

/* ---- 1.6: logging ---- */

/* Log levels, most severe first (set_log_sink). */
enum RegistryLogLevel {
  REGISTRY_LOG_ERROR = 0, /* failed, and the plugin cannot repair it by itself */
  REGISTRY_LOG_WARN = 1,  /* failed, and the plugin is repairing it (a lost session, a re-list) */
  REGISTRY_LOG_INFO = 2,  /* a state change (a session created, a watch recovered) */
  REGISTRY_LOG_DEBUG = 3
};

/* One log record; `component` is e.g. "session", "watch", "lock", "repository". */
typedef void (*RegistryLogCallback)(int32_t level, int64_t unix_time_ms, const char* component,
                                    const char* message, void* user_data);

/* ---- 1.2: locks ---- */

/* A named distributed lock of one repository (registry::lock::DistributedLock). Opaque. */
struct RegistryLock;

/* Called once per lost hold (session lost, lock key deleted or taken, repository closed), from a
 * plugin thread, with the lock's canonical name, the reason's code (a RegistryStatusCode) and
 * message (both valid only during the call). Must return promptly, must not throw or longjmp,
 * and must not call lock, try_lock or release_lock on the same lock. */
typedef void (*RegistryLockLostCallback)(const char* name, int32_t code, const char* message,
                                         void* user_data);

/* ---- 1.7: metrics ---- */

/* The type of a metric family, as Prometheus names it. */
enum RegistryMetricType {
  REGISTRY_METRIC_COUNTER = 0,  /* only goes up (while the process lives) */
  REGISTRY_METRIC_GAUGE = 1,    /* goes up and down */
  REGISTRY_METRIC_HISTOGRAM = 2 /* durations in buckets: samples _bucket, _sum, _count */
};

/* One value of the plugin's metrics: one line of the text format (metrics_text), with its
 * family's name, help and type. Valid only for the duration of the callback that receives it.
 * A later minor may append fields: read only those that fit in struct_size. */
struct RegistryMetricSample {
  uint32_t struct_size; /* sizeof(struct RegistryMetricSample) of the plugin */
  const char* family;   /* e.g. "registry_consul_request_duration_seconds" */
  const char* help;     /* what the family counts */
  int32_t type;         /* a RegistryMetricType */
  /* The family's name, or for a histogram the family's with "_bucket", "_sum" or "_count". */
  const char* name;
  size_t label_count;
  const char* const* label_names;  /* a bucket's last label is "le" ... */
  const char* const* label_values; /* ... its upper bound in seconds, e.g. "0.005" or "+Inf" */
  double value;                    /* a bucket's count is cumulative, as in the text format */
};

/* Receives the samples of visit_metrics, one call per sample, on the calling thread. It must not
 * throw or longjmp, and must not call visit_metrics. */
typedef void (*RegistryMetricCallback)(const struct RegistryMetricSample* sample, void* user_data);

/* ---- 1.8: export ---- */

/* One key as the store holds it (list_entries). Valid only for the duration of the callback that
 * receives it. A later minor may append fields: read only those that fit in struct_size. */
struct RegistryEntry {
  uint32_t struct_size; /* sizeof(struct RegistryEntry) of the plugin */
  const char* key;      /* NUL-terminated repository key, e.g. "/metadata/db" */
  /* The value's bytes, exactly as stored (any bytes, NUL included), followed by a NUL that
   * value_len does not count. */
  const char* value;
  size_t value_len;
  uint64_t flags; /* the store's flags of the key (Consul's 64-bit flags); 0 when never set */
  /* True for an ephemeral key: bound to an instance (a Consul session holds it), so it belongs
   * to that live instance and vanishes with it. False for a persistent key. */
  bool ephemeral;
};

/* Receives the keys of list_entries, one call per key, on the calling thread. It must not throw
 * or longjmp, and must not call destroy. */
typedef void (*RegistryEntryCallback)(const struct RegistryEntry* entry, void* user_data);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* REGISTRY_PLUGIN_REGISTRY_PLUGIN_TYPES_H_ */

// SPDX-License-Identifier: Apache-2.0
// plugin/java/native/jni_env.h
//
// The JNI plumbing of the ShardingSphere bridge, written once: the JavaVM and the classes the
// glue uses (cached by JNI_OnLoad, alive for the JVM's life), threads of the plugin attached to
// the JVM on their first listener call and detached when they exit, byte-array conversions,
// global references that are deleted exactly once, and absl::Status -> Java exception.
//
// Thread safety: every function may be called from any thread; those taking a JNIEnv* only from
// the thread it belongs to.
#ifndef PLUGIN_JAVA_NATIVE_JNI_ENV_H_
#define PLUGIN_JAVA_NATIVE_JNI_ENV_H_

#include <jni.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace registry::java {

// What JNI_OnLoad caches. Class references are global for the JVM's life (never per call).
struct JniCache {
  JavaVM* vm = nullptr;
  jclass byte_array = nullptr;        // byte[]
  jclass status_exception = nullptr;  // NativeStatusException(int code, byte[] utf8Message)
  jmethodID status_exception_init = nullptr;
  jmethodID sink_deliver = nullptr;        // WatchSink.deliver(int type, byte[] key, byte[] value)
  jmethodID connection_changed = nullptr;  // ConnectionSink.changed(int state)
};

// Fills the cache; false (with a Java exception pending) if a class or method is missing.
bool InitJniCache(JavaVM* vm, JNIEnv* env);
const JniCache& Jni();

// The calling thread's JNIEnv, attaching a thread the JVM does not know as a daemon thread named
// "registry-consul-listener-<n>"; such a thread is detached when it exits. nullptr if the JVM
// refuses to attach it.
JNIEnv* AttachedEnv();

// A JNI global reference, deleted once when the last copy goes (on whatever thread that is).
// LiveGlobalRefs() counts those alive, so tests can prove that watches leave none behind.
class GlobalRef {
 public:
  GlobalRef(JNIEnv* env, jobject local);
  ~GlobalRef();
  GlobalRef(const GlobalRef&) = delete;
  GlobalRef& operator=(const GlobalRef&) = delete;
  jobject get() const { return ref_; }

 private:
  jobject ref_;
};
int64_t LiveGlobalRefs();

// The bytes of a Java byte[]; nullopt for null (the Java side checks nulls first, so the callers
// report nullopt as an internal error).
std::optional<std::string> BytesOf(JNIEnv* env, jbyteArray array);
// A new byte[] holding `bytes`; nullptr with OutOfMemoryError pending on failure.
jbyteArray NewBytes(JNIEnv* env, absl::string_view bytes);
// A new byte[][]; nullptr with an exception pending on failure.
jobjectArray NewBytesArray(JNIEnv* env, const std::vector<std::string>& items);
// The bytes of each byte[] of a byte[][] (a null item gives ""). Every string crosses the bridge
// as UTF-8 bytes encoded by Java: JNI's own string functions speak modified UTF-8, which differs
// for characters outside the BMP.
std::vector<std::string> BytesArrayOf(JNIEnv* env, jobjectArray array);

// Throws NativeStatusException(status code, message) in `env`'s thread. `status` is not OK.
void ThrowStatus(JNIEnv* env, const absl::Status& status);

}  // namespace registry::java

#endif  // PLUGIN_JAVA_NATIVE_JNI_ENV_H_

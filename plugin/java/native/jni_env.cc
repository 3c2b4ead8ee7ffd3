// SPDX-License-Identifier: Apache-2.0
// plugin/java/native/jni_env.cc
#include "plugin/java/native/jni_env.h"

#include <atomic>

#include "absl/strings/str_cat.h"

namespace registry::java {
namespace {

JniCache cache;
std::atomic<int64_t> live_global_refs{0};

jclass GlobalClass(JNIEnv* env, const char* name) {
  jclass local = env->FindClass(name);
  if (local == nullptr) return nullptr;
  auto global = static_cast<jclass>(env->NewGlobalRef(local));
  env->DeleteLocalRef(local);
  return global;
}

// Detaches, at thread exit, a plugin thread that AttachedEnv attached. A thread_local's
// destructor runs on that thread as it exits, after its last listener call.
struct Detacher {
  bool attached = false;
  ~Detacher() {
    if (attached) cache.vm->DetachCurrentThread();
  }
};
thread_local Detacher detacher;

}  // namespace

bool InitJniCache(JavaVM* vm, JNIEnv* env) {
  cache.vm = vm;
  cache.byte_array = GlobalClass(env, "[B");
  if (cache.byte_array == nullptr) return false;
  cache.status_exception =
      GlobalClass(env, "org/example/registryconsul/shardingsphere/NativeStatusException");
  if (cache.status_exception == nullptr) return false;
  cache.status_exception_init = env->GetMethodID(cache.status_exception, "<init>", "(I[B)V");
  if (cache.status_exception_init == nullptr) return false;
  jclass sink = env->FindClass("org/example/registryconsul/shardingsphere/WatchSink");
  if (sink == nullptr) return false;
  cache.sink_deliver = env->GetMethodID(sink, "deliver", "(I[B[B)V");
  env->DeleteLocalRef(sink);
  if (cache.sink_deliver == nullptr) return false;
  jclass connection = env->FindClass("org/example/registryconsul/shardingsphere/ConnectionSink");
  if (connection == nullptr) return false;
  cache.connection_changed = env->GetMethodID(connection, "changed", "(I)V");
  env->DeleteLocalRef(connection);
  return cache.connection_changed != nullptr;
}

const JniCache& Jni() { return cache; }

JNIEnv* AttachedEnv() {
  JNIEnv* env = nullptr;
  jint got = cache.vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_8);
  if (got == JNI_OK) return env;
  if (got != JNI_EDETACHED) return nullptr;
  static std::atomic<int> next_thread{1};
  std::string name = absl::StrCat("registry-consul-listener-", next_thread.fetch_add(1));
  JavaVMAttachArgs args{JNI_VERSION_1_8, name.data(), nullptr};
  if (cache.vm->AttachCurrentThreadAsDaemon(reinterpret_cast<void**>(&env), &args) != JNI_OK) {
    return nullptr;
  }
  detacher.attached = true;
  return env;
}

GlobalRef::GlobalRef(JNIEnv* env, jobject local) : ref_(env->NewGlobalRef(local)) {
  if (ref_ != nullptr) live_global_refs.fetch_add(1);
}

GlobalRef::~GlobalRef() {
  if (ref_ == nullptr) return;
  live_global_refs.fetch_sub(1);
  // The last holder of a watch's reference may be a plugin thread (a listener that removed its
  // own watch): it is attached, since it was running that listener.
  if (JNIEnv* env = AttachedEnv(); env != nullptr) env->DeleteGlobalRef(ref_);
}

int64_t LiveGlobalRefs() { return live_global_refs.load(); }

std::optional<std::string> BytesOf(JNIEnv* env, jbyteArray array) {
  if (array == nullptr) return std::nullopt;
  std::string bytes(static_cast<size_t>(env->GetArrayLength(array)), '\0');
  env->GetByteArrayRegion(array, 0, static_cast<jsize>(bytes.size()),
                          reinterpret_cast<jbyte*>(bytes.data()));
  return bytes;
}

jbyteArray NewBytes(JNIEnv* env, absl::string_view bytes) {
  jbyteArray array = env->NewByteArray(static_cast<jsize>(bytes.size()));
  if (array == nullptr) return nullptr;
  env->SetByteArrayRegion(array, 0, static_cast<jsize>(bytes.size()),
                          reinterpret_cast<const jbyte*>(bytes.data()));
  return array;
}

jobjectArray NewBytesArray(JNIEnv* env, const std::vector<std::string>& items) {
  jobjectArray array =
      env->NewObjectArray(static_cast<jsize>(items.size()), cache.byte_array, nullptr);
  if (array == nullptr) return nullptr;
  for (size_t i = 0; i < items.size(); ++i) {
    jbyteArray item = NewBytes(env, items[i]);
    if (item == nullptr) return nullptr;
    env->SetObjectArrayElement(array, static_cast<jsize>(i), item);
    env->DeleteLocalRef(item);
  }
  return array;
}

std::vector<std::string> BytesArrayOf(JNIEnv* env, jobjectArray array) {
  std::vector<std::string> items;
  if (array == nullptr) return items;
  jsize n = env->GetArrayLength(array);
  for (jsize i = 0; i < n; ++i) {
    auto item = static_cast<jbyteArray>(env->GetObjectArrayElement(array, i));
    items.push_back(BytesOf(env, item).value_or(""));
    env->DeleteLocalRef(item);
  }
  return items;
}

void ThrowStatus(JNIEnv* env, const absl::Status& status) {
  jbyteArray message = NewBytes(env, status.message());
  if (message == nullptr) return;  // OutOfMemoryError pending
  auto exception =
      static_cast<jthrowable>(env->NewObject(cache.status_exception, cache.status_exception_init,
                                             static_cast<jint>(status.code()), message));
  env->DeleteLocalRef(message);
  if (exception != nullptr) env->Throw(exception);
}

}  // namespace registry::java

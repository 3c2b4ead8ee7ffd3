// SPDX-License-Identifier: Apache-2.0
// plugin/java/native/jni_exports.cc
//
// The native methods of org.example.registryconsul.shardingsphere.NativeRepository, registered by
// JNI_OnLoad (the glue's only exported symbol). A repository handle is a BridgeRepository*
// as a long; the Java side never passes one it has destroyed (it counts calls in flight). Each
// method turns a non-OK status into a NativeStatusException, which the Java side maps to the
// exceptions ShardingSphere expects. Nothing here throws a C++ exception across JNI: the calls
// below return statuses, and a std::bad_alloc is turned into a status too.
#include <jni.h>

#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "base/status_macros.h"
#include "conf/registry_config.h"
#include "plugin/java/native/bridge_repository.h"
#include "plugin/java/native/jni_env.h"
#include "registry/events.h"
#include "registry/repository.h"

namespace registry::java {
namespace {

BridgeRepository* Repo(jlong handle) { return reinterpret_cast<BridgeRepository*>(handle); }
plugin::PluginLock* LockOf(jlong handle) { return reinterpret_cast<plugin::PluginLock*>(handle); }

std::string Bytes(JNIEnv* env, jbyteArray array) { return BytesOf(env, array).value_or(""); }

// Runs `body`, turning a failed status into a pending NativeStatusException and an exception
// escaping it into one too; returns `failed` then.
template <typename T, typename Body>
T Guard(JNIEnv* env, T failed, Body&& body) {
  try {
    auto result = body();
    if (!result.ok()) {
      ThrowStatus(env, result.status());
      return failed;
    }
    return *std::move(result);
  } catch (const std::bad_alloc&) {
    ThrowStatus(env, absl::ResourceExhaustedError("the bridge ran out of memory"));
  } catch (const std::exception& e) {
    ThrowStatus(env, absl::InternalError(e.what()));
  }
  return failed;
}

// As Guard, for calls that give only a status.
template <typename Body>
void GuardStatus(JNIEnv* env, Body&& body) {
  Guard(env, 0, [&]() -> absl::StatusOr<int> {
    RETURN_IF_ERROR(body());
    return 0;
  });
}

jobjectArray KnownProps(JNIEnv* env, jclass) {
  return NewBytesArray(env, conf::RepositoryPropKeys());
}

jlong Open(JNIEnv* env, jclass, jobjectArray keys, jobjectArray values, jobjectArray dirs) {
  return Guard(env, jlong{0}, [&]() -> absl::StatusOr<jlong> {
    std::vector<std::string> k = BytesArrayOf(env, keys);
    std::vector<std::string> v = BytesArrayOf(env, values);
    plugin::PropList props;
    for (size_t i = 0; i < k.size() && i < v.size(); ++i) props.emplace_back(k[i], v[i]);
    ASSIGN_OR_RETURN(std::unique_ptr<BridgeRepository> repo,
                     BridgeRepository::Open(props, BytesArrayOf(env, dirs)));
    return reinterpret_cast<jlong>(repo.release());
  });
}

jbyteArray Get(JNIEnv* env, jclass, jlong handle, jbyteArray key) {
  return Guard(env, jbyteArray{nullptr}, [&]() -> absl::StatusOr<jbyteArray> {
    ASSIGN_OR_RETURN(std::optional<std::string> value,
                     Repo(handle)->repository().Get(Bytes(env, key)));
    return value.has_value() ? NewBytes(env, *value) : nullptr;
  });
}

jobjectArray Children(JNIEnv* env, jclass, jlong handle, jbyteArray key) {
  return Guard(env, jobjectArray{nullptr}, [&]() -> absl::StatusOr<jobjectArray> {
    ASSIGN_OR_RETURN(std::vector<std::string> names,
                     Repo(handle)->repository().GetChildrenKeys(Bytes(env, key)));
    return NewBytesArray(env, names);
  });
}

jboolean Exists(JNIEnv* env, jclass, jlong handle, jbyteArray key) {
  return Guard(env, jboolean{JNI_FALSE}, [&]() -> absl::StatusOr<jboolean> {
    ASSIGN_OR_RETURN(bool exists, Repo(handle)->repository().IsExisted(Bytes(env, key)));
    return exists ? JNI_TRUE : JNI_FALSE;
  });
}

void Persist(JNIEnv* env, jclass, jlong handle, jbyteArray key, jbyteArray value) {
  GuardStatus(
      env, [&] { return Repo(handle)->repository().Persist(Bytes(env, key), Bytes(env, value)); });
}

// False when the key does not exist (nothing written).
jboolean Update(JNIEnv* env, jclass, jlong handle, jbyteArray key, jbyteArray value) {
  return Guard(env, jboolean{JNI_FALSE}, [&]() -> absl::StatusOr<jboolean> {
    absl::Status status = Repo(handle)->repository().Update(Bytes(env, key), Bytes(env, value));
    if (absl::IsNotFound(status)) return JNI_FALSE;
    if (!status.ok()) return status;
    return JNI_TRUE;
  });
}

void Delete(JNIEnv* env, jclass, jlong handle, jbyteArray key) {
  GuardStatus(env, [&] { return Repo(handle)->repository().Delete(Bytes(env, key)); });
}

void PersistEphemeral(JNIEnv* env, jclass, jlong handle, jbyteArray key, jbyteArray value) {
  GuardStatus(env, [&] {
    return Repo(handle)->repository().PersistEphemeral(Bytes(env, key), Bytes(env, value));
  });
}

jboolean PersistExclusiveEphemeral(JNIEnv* env, jclass, jlong handle, jbyteArray key,
                                   jbyteArray value) {
  return Guard(env, jboolean{JNI_FALSE}, [&]() -> absl::StatusOr<jboolean> {
    ASSIGN_OR_RETURN(bool created, Repo(handle)->repository().PersistExclusiveEphemeral(
                                       Bytes(env, key), Bytes(env, value)));
    return created ? JNI_TRUE : JNI_FALSE;
  });
}

// Delivers one event to the Java sink on the calling plugin thread (attached on first use).
// The local frame keeps a long-lived attached thread from collecting references.
void Deliver(const GlobalRef& sink, const DataChangedEvent& event) {
  JNIEnv* env = AttachedEnv();
  if (env == nullptr || env->PushLocalFrame(4) != JNI_OK) return;
  jbyteArray key = NewBytes(env, event.key);
  jbyteArray value = key == nullptr ? nullptr : NewBytes(env, event.value.value_or(""));
  if (value != nullptr) {
    env->CallVoidMethod(sink.get(), Jni().sink_deliver, static_cast<jint>(event.type), key, value);
  }
  // WatchSink.deliver catches what a listener throws; what is left (an OutOfMemoryError) must
  // not stay pending on a thread that is not running Java code.
  if (env->ExceptionCheck()) env->ExceptionClear();
  env->PopLocalFrame(nullptr);
}

jlong Watch(JNIEnv* env, jclass, jlong handle, jbyteArray key, jobject sink) {
  return Guard(env, jlong{0}, [&]() -> absl::StatusOr<jlong> {
    // Shared by the listener's copies; deleted when the plugin frees the listener, which is
    // after the watch's removal (or the repository's destruction) returned.
    auto ref = std::make_shared<const GlobalRef>(env, sink);
    ASSIGN_OR_RETURN(
        Repository::WatchId id,
        Repo(handle)->repository().Watch(
            Bytes(env, key), [ref](const DataChangedEvent& event) { Deliver(*ref, event); }));
    return static_cast<jlong>(id);
  });
}

// Tells the Java sink of a connection state on the calling plugin thread (a listener worker,
// attached on first use; never the thread that renews the session).
void DeliverState(const GlobalRef& sink, ConnectionState state) {
  JNIEnv* env = AttachedEnv();
  if (env == nullptr) return;
  env->CallVoidMethod(sink.get(), Jni().connection_changed, static_cast<jint>(state));
  // ConnectionSink.changed catches what its work throws; see Deliver.
  if (env->ExceptionCheck()) env->ExceptionClear();
}

jlong AddConnectionListener(JNIEnv* env, jclass, jlong handle, jobject sink) {
  return Guard(env, jlong{0}, [&]() -> absl::StatusOr<jlong> {
    // As Watch's: deleted when the plugin frees the listener (at the repository's destruction).
    auto ref = std::make_shared<const GlobalRef>(env, sink);
    ASSIGN_OR_RETURN(int id, Repo(handle)->repository().AddConnectionListenerOrError(
                                 [ref](ConnectionState state) { DeliverState(*ref, state); }));
    return static_cast<jlong>(id);
  });
}

void RemoveWatch(JNIEnv*, jclass, jlong handle, jlong id) {
  Repo(handle)->repository().RemoveWatch(static_cast<Repository::WatchId>(id));
}

jlong Lock(JNIEnv* env, jclass, jlong handle, jbyteArray name) {
  return Guard(env, jlong{0}, [&]() -> absl::StatusOr<jlong> {
    ASSIGN_OR_RETURN(plugin::PluginLock * lock, Repo(handle)->Lock(Bytes(env, name)));
    return reinterpret_cast<jlong>(lock);
  });
}

jboolean TryLock(JNIEnv* env, jclass, jlong, jlong lock, jlong timeout_ms) {
  return Guard(env, jboolean{JNI_FALSE}, [&]() -> absl::StatusOr<jboolean> {
    ASSIGN_OR_RETURN(bool held, LockOf(lock)->TryLock(absl::Milliseconds(timeout_ms)));
    return held ? JNI_TRUE : JNI_FALSE;
  });
}

void Unlock(JNIEnv* env, jclass, jlong, jlong lock) {
  GuardStatus(env, [&] { return LockOf(lock)->Unlock(); });
}

void Close(JNIEnv* env, jclass, jlong handle) {
  GuardStatus(env, [&] { return Repo(handle)->repository().Close(); });
}

void Free(JNIEnv*, jclass, jlong handle) { delete Repo(handle); }

jlong GlobalRefs(JNIEnv*, jclass) { return LiveGlobalRefs(); }

const JNINativeMethod kMethods[] = {
    {const_cast<char*>("knownProps"), const_cast<char*>("()[[B"),
     reinterpret_cast<void*>(&KnownProps)},
    {const_cast<char*>("open"), const_cast<char*>("([[B[[B[[B)J"), reinterpret_cast<void*>(&Open)},
    {const_cast<char*>("get"), const_cast<char*>("(J[B)[B"), reinterpret_cast<void*>(&Get)},
    {const_cast<char*>("children"), const_cast<char*>("(J[B)[[B"),
     reinterpret_cast<void*>(&Children)},
    {const_cast<char*>("exists"), const_cast<char*>("(J[B)Z"), reinterpret_cast<void*>(&Exists)},
    {const_cast<char*>("persist"), const_cast<char*>("(J[B[B)V"),
     reinterpret_cast<void*>(&Persist)},
    {const_cast<char*>("update"), const_cast<char*>("(J[B[B)Z"), reinterpret_cast<void*>(&Update)},
    {const_cast<char*>("delete"), const_cast<char*>("(J[B)V"), reinterpret_cast<void*>(&Delete)},
    {const_cast<char*>("persistEphemeral"), const_cast<char*>("(J[B[B)V"),
     reinterpret_cast<void*>(&PersistEphemeral)},
    {const_cast<char*>("persistExclusiveEphemeral"), const_cast<char*>("(J[B[B)Z"),
     reinterpret_cast<void*>(&PersistExclusiveEphemeral)},
    {const_cast<char*>("watch"),
     const_cast<char*>("(J[BLorg/example/registryconsul/shardingsphere/WatchSink;)J"),
     reinterpret_cast<void*>(&Watch)},
    {const_cast<char*>("removeWatch"), const_cast<char*>("(JJ)V"),
     reinterpret_cast<void*>(&RemoveWatch)},
    {const_cast<char*>("addConnectionListener"),
     const_cast<char*>("(JLorg/example/registryconsul/shardingsphere/ConnectionSink;)J"),
     reinterpret_cast<void*>(&AddConnectionListener)},
    {const_cast<char*>("lock"), const_cast<char*>("(J[B)J"), reinterpret_cast<void*>(&Lock)},
    {const_cast<char*>("tryLock"), const_cast<char*>("(JJJ)Z"), reinterpret_cast<void*>(&TryLock)},
    {const_cast<char*>("unlock"), const_cast<char*>("(JJ)V"), reinterpret_cast<void*>(&Unlock)},
    {const_cast<char*>("close"), const_cast<char*>("(J)V"), reinterpret_cast<void*>(&Close)},
    {const_cast<char*>("free"), const_cast<char*>("(J)V"), reinterpret_cast<void*>(&Free)},
    {const_cast<char*>("liveGlobalRefs"), const_cast<char*>("()J"),
     reinterpret_cast<void*>(&GlobalRefs)},
};

}  // namespace
}  // namespace registry::java

extern "C" JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void*) {
  using registry::java::kMethods;
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_1_8) != JNI_OK) return JNI_ERR;
  if (!registry::java::InitJniCache(vm, env)) return JNI_ERR;
  jclass bridge = env->FindClass("org/example/registryconsul/shardingsphere/NativeRepository");
  if (bridge == nullptr) return JNI_ERR;
  jint registered = env->RegisterNatives(bridge, kMethods, sizeof(kMethods) / sizeof(kMethods[0]));
  env->DeleteLocalRef(bridge);
  return registered == JNI_OK ? JNI_VERSION_1_8 : JNI_ERR;
}

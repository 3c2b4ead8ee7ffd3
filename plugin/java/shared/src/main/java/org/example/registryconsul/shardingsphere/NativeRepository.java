// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere;

/**
 * The native methods of the glue library (registered by its JNI_OnLoad). A {@code handle} is a
 * native repository; callers pass only handles that {@link NativeHandle} keeps alive. Strings
 * cross as UTF-8 bytes. A failure is a {@link NativeStatusException}.
 */
final class NativeRepository {
  private NativeRepository() {}

  /** The prop keys the plugin accepts. */
  static native byte[][] knownProps();

  /**
   * Loads the plugin (once per JVM: from the glue's own directory, then {@code pluginDirs}, then
   * REGISTRY_PLUGIN_PATH) and creates a repository from the props.
   */
  static native long open(byte[][] keys, byte[][] values, byte[][] pluginDirs)
      throws NativeStatusException;

  /** The value, or null when the key is absent. */
  static native byte[] get(long handle, byte[] key) throws NativeStatusException;

  static native byte[][] children(long handle, byte[] key) throws NativeStatusException;

  static native boolean exists(long handle, byte[] key) throws NativeStatusException;

  static native void persist(long handle, byte[] key, byte[] value) throws NativeStatusException;

  /** False when the key is absent: nothing is written. */
  static native boolean update(long handle, byte[] key, byte[] value)
      throws NativeStatusException;

  static native void delete(long handle, byte[] key) throws NativeStatusException;

  static native void persistEphemeral(long handle, byte[] key, byte[] value)
      throws NativeStatusException;

  static native boolean persistExclusiveEphemeral(long handle, byte[] key, byte[] value)
      throws NativeStatusException;

  /**
   * Watches the key and its subtree; events go to {@code sink} on plugin threads attached to the
   * JVM. Returns the watch id.
   */
  static native long watch(long handle, byte[] key, WatchSink sink) throws NativeStatusException;

  /**
   * Tells {@code sink} of the repository's connection states, on plugin threads attached to the
   * JVM, until the repository is destroyed. Returns the listener id.
   */
  static native long addConnectionListener(long handle, ConnectionSink sink)
      throws NativeStatusException;

  /** When it returns the sink is not called again (except a call of the removing thread). */
  static native void removeWatch(long handle, long watchId);

  /** The native lock named {@code name}, kept until {@link #free}. */
  static native long lock(long handle, byte[] name) throws NativeStatusException;

  static native boolean tryLock(long handle, long lock, long timeoutMillis)
      throws NativeStatusException;

  static native void unlock(long handle, long lock) throws NativeStatusException;

  /** Ends the session (ephemeral keys go) and stops every watch. */
  static native void close(long handle) throws NativeStatusException;

  /** Destroys the repository; the handle is invalid afterwards. */
  static native void free(long handle);

  /** The glue's per-watch JNI global references alive now, in every repository (for tests). */
  static native long liveGlobalRefs();
}

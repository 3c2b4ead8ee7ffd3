// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere;

import java.lang.System.Logger.Level;
import org.apache.shardingsphere.mode.event.DataChangedEvent;
import org.apache.shardingsphere.mode.repository.cluster.listener.DataChangedEventListener;

/**
 * One listener of one watch, called by the native glue on the plugin's listener threads (attached
 * to the JVM as daemon threads named {@code registry-consul-listener-<n>}; they never do network
 * I/O). Calls of one watch never overlap and come in store order; a slow listener does not hold
 * up the others. What a listener throws is logged and the watch goes on.
 */
final class WatchSink {
  private static final System.Logger LOG = System.getLogger(WatchSink.class.getPackageName());
  private static final ThreadLocal<Boolean> IN_LISTENER = ThreadLocal.withInitial(() -> false);
  // The plugin's event types, in its numbering (0 added, 1 updated, 2 deleted).
  private static final DataChangedEvent.Type[] TYPES = {
    DataChangedEvent.Type.ADDED, DataChangedEvent.Type.UPDATED, DataChangedEvent.Type.DELETED
  };

  private final String watchedKey;
  private final DataChangedEventListener listener;
  private final NativeHandle handle;

  WatchSink(String watchedKey, DataChangedEventListener listener, NativeHandle handle) {
    this.watchedKey = watchedKey;
    this.listener = listener;
    this.handle = handle;
  }

  /** True on a thread that is running a listener (of any repository). */
  static boolean onListenerThread() {
    return IN_LISTENER.get();
  }

  /** Called by the native glue. The key comes back exactly as written, leading '/' included. */
  void deliver(int type, byte[] key, byte[] value) {
    if (handle.isClosing() || type < 0 || type >= TYPES.length) {
      return; // after close() began, no listener is called
    }
    IN_LISTENER.set(true);
    try {
      listener.onChange(new DataChangedEvent(Utf8.decode(key), Utf8.decode(value), TYPES[type]));
    } catch (Throwable thrown) {
      LOG.log(Level.WARNING, "a listener of '" + watchedKey + "' threw; the watch goes on", thrown);
    } finally {
      IN_LISTENER.set(false);
    }
  }
}

// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere;

import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The repository's connection states, called by the native glue on one of the plugin's listener
 * threads (never the one that renews the session), in order. A session the plugin lost and
 * replaced ends with RECONNECTED once every ephemeral key is bound to the new session, or dropped
 * when another session holds it now (an exclusive key taken meanwhile): then {@code
 * afterSessionLoss} runs, on that thread.
 */
final class ConnectionSink {
  private static final System.Logger LOG = System.getLogger(ConnectionSink.class.getPackageName());
  // The plugin's numbering (registry/repository.h, ConnectionState).
  static final int LOST = 2;
  static final int RECONNECTED = 3;

  private final NativeHandle handle;
  private final Runnable afterSessionLoss;
  private final AtomicBoolean lost = new AtomicBoolean();

  ConnectionSink(NativeHandle handle, Runnable afterSessionLoss) {
    this.handle = handle;
    this.afterSessionLoss = afterSessionLoss;
  }

  /** Called by the native glue. */
  void changed(int state) {
    if (handle.isClosing()) {
      return;
    }
    if (state == LOST) {
      lost.set(true);
    } else if (state == RECONNECTED && lost.getAndSet(false)) {
      try {
        afterSessionLoss.run();
      } catch (Throwable thrown) {
        LOG.log(Level.ERROR, "restoring this instance after its Consul session was lost failed",
            thrown);
      }
    }
  }
}

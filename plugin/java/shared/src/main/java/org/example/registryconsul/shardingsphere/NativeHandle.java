// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere;

import java.lang.System.Logger.Level;
import java.time.Duration;

/**
 * Owns one native repository and keeps it alive while calls are in flight: every call runs
 * between {@link #enter} and {@link #exit}, and the native repository is freed only once it is
 * closed and no call is left. Closing and freeing run on a thread of their own, never on a
 * listener's thread (the plugin cannot destroy a repository from inside its own listener), and
 * {@link #close} waits for them only up to a bound, so it never blocks forever behind a listener
 * that does not return.
 */
final class NativeHandle {
  private static final System.Logger LOG = System.getLogger(NativeHandle.class.getPackageName());

  private final long address;
  private int callsInFlight; // guarded by this
  private boolean closing; // guarded by this

  NativeHandle(long address) {
    this.address = address;
  }

  /** The native handle for one call; IllegalStateException once closing began. */
  synchronized long enter() {
    if (closing) {
      throw new IllegalStateException("the Consul repository is closed");
    }
    callsInFlight++;
    return address;
  }

  synchronized void exit() {
    callsInFlight--;
    if (callsInFlight == 0) {
      notifyAll();
    }
  }

  synchronized boolean isClosing() {
    return closing;
  }

  /**
   * Closes (the session ends, watches stop) and frees the native repository on a closer thread;
   * waits up to {@code wait} for it unless called on a listener thread. Idempotent.
   */
  void close(Duration wait) {
    synchronized (this) {
      if (closing) {
        return;
      }
      closing = true;
    }
    Thread closer = new Thread(this::closeAndFree, "registry-consul-closer");
    closer.setDaemon(true);
    closer.start();
    if (WatchSink.onListenerThread()) {
      return; // the plugin finishes closing once this listener returns
    }
    try {
      closer.join(wait.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (closer.isAlive()) {
      LOG.log(Level.WARNING, "closing the Consul repository takes longer than " + wait
          + " (a listener or a lock call has not returned); it finishes in the background");
    }
  }

  private void closeAndFree() {
    try {
      NativeRepository.close(address);
    } catch (NativeStatusException e) {
      LOG.log(Level.WARNING, "closing the Consul repository: " + e.getMessage());
    }
    synchronized (this) {
      while (callsInFlight > 0) {
        try {
          wait();
        } catch (InterruptedException e) {
          return; // only this class starts the closer, and it never interrupts it
        }
      }
    }
    NativeRepository.free(address);
  }
}

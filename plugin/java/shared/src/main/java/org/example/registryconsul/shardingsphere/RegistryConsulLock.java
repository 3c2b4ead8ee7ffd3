// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere;

import org.apache.shardingsphere.mode.repository.cluster.lock.DistributedLock;

/**
 * The plugin's two-tier re-entrant mutex for one lock key ("/lock/global/locks/name"): threads of
 * this process queue on its process-local tier, then one holds the Consul lock, with the plugin's
 * deadline, lock-delay and loss handling. Held per thread: only the holding thread unlocks.
 * Platform threads only (a virtual thread may change carriers between lock and unlock).
 */
final class RegistryConsulLock implements DistributedLock {
  private final String lockKey;
  private final AbstractConsulRepository.LockSource source;
  private long nativeLock; // guarded by this; 0 until the first use makes it

  RegistryConsulLock(String lockKey, AbstractConsulRepository.LockSource source) {
    this.lockKey = lockKey;
    this.source = source;
  }

  /** True once the calling thread holds the lock; false when {@code timeoutMillis} ran out. */
  @Override
  public boolean tryLock(long timeoutMillis) {
    return source.call(
        address -> NativeRepository.tryLock(address, nativeLock(address), timeoutMillis),
        Errors::of);
  }

  /** Ends one hold of the calling thread; IllegalMonitorStateException if it holds none. */
  @Override
  public void unlock() {
    source.call(
        address -> {
          NativeRepository.unlock(address, nativeLock(address));
          return null;
        },
        failure -> failure.getCode() == NativeStatusException.FAILED_PRECONDITION
            ? new IllegalMonitorStateException(failure.getMessage())
            : Errors.of(failure));
  }

  /**
   * The plugin's lock behind this one, made once (the plugin's get_lock makes no request; the
   * repository closes it).
   */
  private synchronized long nativeLock(long address) throws NativeStatusException {
    if (nativeLock == 0) {
      nativeLock = NativeRepository.lock(address, Utf8.key(lockKey));
    }
    return nativeLock;
  }
}

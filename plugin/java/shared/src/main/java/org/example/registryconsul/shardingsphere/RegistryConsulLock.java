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
  private final RegistryConsulRepository.LockSource source;

  RegistryConsulLock(String lockKey, RegistryConsulRepository.LockSource source) {
    this.lockKey = lockKey;
    this.source = source;
  }

  /** True once the calling thread holds the lock; false when {@code timeoutMillis} ran out. */
  @Override
  public boolean tryLock(long timeoutMillis) {
    return source.call(
        address -> NativeRepository.tryLock(address, source.lockOf(lockKey, address), timeoutMillis),
        Errors::of);
  }

  /** Ends one hold of the calling thread; IllegalMonitorStateException if it holds none. */
  @Override
  public void unlock() {
    source.call(
        address -> {
          NativeRepository.unlock(address, source.lockOf(lockKey, address));
          return null;
        },
        failure -> failure.getCode() == NativeStatusException.FAILED_PRECONDITION
            ? new IllegalMonitorStateException(failure.getMessage())
            : Errors.of(failure));
  }
}

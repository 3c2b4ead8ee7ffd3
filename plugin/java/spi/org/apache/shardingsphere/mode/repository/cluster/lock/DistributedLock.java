// Compile-only declaration of ShardingSphere 5.5's DistributedLock, written from its signatures; never
// shipped (at run time ShardingSphere's own class is used).
package org.apache.shardingsphere.mode.repository.cluster.lock;

public interface DistributedLock {
  boolean tryLock(long timeoutMillis);

  void unlock();
}

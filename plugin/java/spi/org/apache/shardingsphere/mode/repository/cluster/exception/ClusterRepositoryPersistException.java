// Compile-only declaration of ShardingSphere 5.5's ClusterRepositoryPersistException, written from its signatures; never
// shipped (at run time ShardingSphere's own class is used).
// The real one extends ShardingSphere's own runtime exception type.
package org.apache.shardingsphere.mode.repository.cluster.exception;

public final class ClusterRepositoryPersistException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public ClusterRepositoryPersistException(Exception cause) {
    super(cause);
  }
}

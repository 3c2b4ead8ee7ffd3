// Compile-only declaration of ShardingSphere 5.5's PersistRepository, written from its signatures; never
// shipped (at run time ShardingSphere's own class is used).
package org.apache.shardingsphere.mode.spi.repository;

import java.util.List;
import org.apache.shardingsphere.infra.spi.type.typed.TypedSPI;

public interface PersistRepository extends TypedSPI, AutoCloseable {
  String PATH_SEPARATOR = "/";

  String query(String key);

  List<String> getChildrenKeys(String key);

  boolean isExisted(String key);

  void persist(String key, String value);

  default void persistEphemeral(String key, String value) {}

  void update(String key, String value);

  void delete(String key);

  @Override
  void close();
}

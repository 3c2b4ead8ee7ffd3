// Compile-only declaration of ShardingSphere 5.5's TypedSPI, written from its signatures; never
// shipped (at run time ShardingSphere's own class is used).
package org.apache.shardingsphere.infra.spi.type.typed;

import java.util.Collection;
import java.util.Collections;
import java.util.Properties;

public interface TypedSPI {
  default void init(Properties props) {}

  Object getType();

  default Collection<Object> getTypeAliases() {
    return Collections.emptyList();
  }

  default boolean isDefault() {
    return false;
  }
}

// Compile-only declaration of ShardingSphere 5.5's TypedProperties, written from its signatures; never
// shipped (at run time ShardingSphere's own class is used).
// The real class is bounded <E extends Enum<E> & TypedPropertyKey>; only its erasure matters here.
package org.apache.shardingsphere.infra.props;

import java.util.Properties;

public abstract class TypedProperties<E> {
  private final Properties props;

  protected TypedProperties(Properties props) {
    this.props = props;
  }

  public Properties getProps() {
    return props;
  }
}

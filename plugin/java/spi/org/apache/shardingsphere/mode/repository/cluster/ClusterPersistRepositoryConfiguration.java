// Compile-only declaration of ShardingSphere 5.5's ClusterPersistRepositoryConfiguration, written from its signatures; never
// shipped (at run time ShardingSphere's own class is used).
package org.apache.shardingsphere.mode.repository.cluster;

import java.util.Properties;

public final class ClusterPersistRepositoryConfiguration {
  private final String type;
  private final String namespace;
  private final String serverLists;
  private final Properties props;

  public ClusterPersistRepositoryConfiguration(
      String type, String namespace, String serverLists, Properties props) {
    this.type = type;
    this.namespace = namespace;
    this.serverLists = serverLists;
    this.props = props;
  }

  public String getType() {
    return type;
  }

  public String getNamespace() {
    return namespace;
  }

  public String getServerLists() {
    return serverLists;
  }

  public Properties getProps() {
    return props;
  }
}

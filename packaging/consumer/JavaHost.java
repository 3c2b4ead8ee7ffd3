// SPDX-License-Identifier: Apache-2.0
// packaging/consumer/JavaHost.java ADDRESS
//
// A Java host of the installed ShardingSphere bridge: finds the repository of type "Consul"
// through ServiceLoader, as ShardingSphere does, then persists, reads back and deletes a key on
// the server at ADDRESS. Run by scripts/package-test.sh with the installed jar (with and without
// the installed native libraries on java.library.path), on ShardingSphere's real jars of the version.
import java.util.Properties;
import java.util.ServiceLoader;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepository;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepositoryConfiguration;

public final class JavaHost {
  public static void main(String[] args) {
    ClusterPersistRepository repository = null;
    for (ClusterPersistRepository each : ServiceLoader.load(ClusterPersistRepository.class)) {
      if ("Consul".equalsIgnoreCase(String.valueOf(each.getType()))) {
        repository = each;
      }
    }
    if (repository == null) {
      throw new IllegalStateException("no ClusterPersistRepository of type Consul");
    }
    repository.init(
        new ClusterPersistRepositoryConfiguration("Consul", "package_test_java", args[0],
            new Properties()),
        null);
    try {
      repository.persist("/metadata/db", "from java");
      String read = repository.query("/metadata/db");
      if (!"from java".equals(read)) {
        throw new IllegalStateException("read back '" + read + "'");
      }
      repository.delete("/metadata");
      if (repository.isExisted("/metadata/db")) {
        throw new IllegalStateException("/metadata/db is still there after delete");
      }
    } finally {
      repository.close();
    }
    System.out.println("java host: persist, query, delete ok");
  }
}

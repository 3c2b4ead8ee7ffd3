// Compile-only declaration of ShardingSphere 5.5's TypedSPILoader, written from its signatures; never
// shipped (at run time ShardingSphere's own class is used).
// Its body mimics the real loader for the tests: every provider is constructed on each lookup,
// the type matches case-insensitively (aliases exactly), and init(Properties) runs first.
package org.apache.shardingsphere.infra.spi.type.typed;

import java.util.Properties;
import java.util.ServiceLoader;

public final class TypedSPILoader {
  private TypedSPILoader() {}

  public static <T extends TypedSPI> T getService(Class<T> serviceInterface, Object type) {
    return getService(serviceInterface, type, new Properties());
  }

  public static <T extends TypedSPI> T getService(
      Class<T> serviceInterface, Object type, Properties props) {
    T found = null;
    for (T each : ServiceLoader.load(serviceInterface)) {
      if (found == null && matches(each, type)) {
        found = each;
      }
    }
    if (found == null) {
      throw new IllegalArgumentException(
          "no " + serviceInterface.getName() + " of type '" + type + "'");
    }
    found.init(props);
    return found;
  }

  private static boolean matches(TypedSPI service, Object type) {
    if (type == null) {
      return service.isDefault();
    }
    return service.getType().toString().equalsIgnoreCase(type.toString())
        || service.getTypeAliases().contains(type);
  }
}

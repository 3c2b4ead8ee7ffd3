// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere;

import java.lang.System.Logger.Level;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import org.apache.shardingsphere.mode.repository.cluster.ClusterPersistRepositoryConfiguration;

/**
 * ShardingSphere's repository configuration as the plugin's props. {@code config.getProps()} is
 * the raw YAML map: its values may be Integer, Long or Boolean as well as String (so they are
 * read with {@code get}, not {@code getProperty}). The namespace and server lists of the
 * configuration win over props of the same name. Props the plugin does not know (the plugin's own
 * list decides) are left out and logged once: a ShardingSphere YAML may carry props meant for
 * another repository type.
 */
final class BridgeProps {
  private static final System.Logger LOG = System.getLogger(BridgeProps.class.getPackageName());
  static final String NAMESPACE = "namespace";
  static final String SERVER_LISTS = "server-lists";

  final byte[][] keys;
  final byte[][] values;

  private BridgeProps(Map<String, String> props) {
    keys = new byte[props.size()][];
    values = new byte[props.size()][];
    int i = 0;
    for (Map.Entry<String, String> each : props.entrySet()) {
      keys[i] = Utf8.encode(each.getKey(), "prop name");
      values[i] = Utf8.encode(each.getValue(), "prop " + each.getKey());
      i++;
    }
  }

  /** The props to open the repository with; {@code known} is the plugin's list of prop keys. */
  static BridgeProps of(ClusterPersistRepositoryConfiguration config, Set<String> known) {
    Map<String, String> props = new LinkedHashMap<>();
    putIfSet(props, NAMESPACE, config.getNamespace());
    putIfSet(props, SERVER_LISTS, config.getServerLists());
    Set<String> ignored = new TreeSet<>();
    Properties raw = config.getProps() == null ? new Properties() : config.getProps();
    for (Map.Entry<Object, Object> each : raw.entrySet()) {
      String key = String.valueOf(each.getKey());
      if (!known.contains(key)) {
        ignored.add(key);
      } else if (each.getValue() != null) {
        props.putIfAbsent(key, String.valueOf(each.getValue()));
      }
    }
    if (!ignored.isEmpty()) {
      LOG.log(Level.WARNING, "props the Consul registry plugin does not know, ignored: " + ignored);
    }
    return new BridgeProps(props);
  }

  /** The plugin's prop keys, decoded. */
  static Set<String> knownKeys(byte[][] encoded) {
    Set<String> known = new HashSet<>();
    for (byte[] key : encoded) {
      known.add(Utf8.decode(key));
    }
    return known;
  }

  private static void putIfSet(Map<String, String> props, String key, String value) {
    if (value != null && !value.isEmpty()) {
      props.put(key, value);
    }
  }
}

// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere;

import java.nio.charset.StandardCharsets;

/**
 * A failed call of the Consul plugin, as the native glue reports it: the plugin's status code
 * (absl's, e.g. 3 invalid argument, 5 not found, 9 failed precondition, 14 unavailable) and its
 * message, which names the key, prop or value at fault. It reaches ShardingSphere as the cause of
 * a {@code ClusterRepositoryPersistException}.
 */
public final class NativeStatusException extends Exception {
  private static final long serialVersionUID = 1L;

  static final int INVALID_ARGUMENT = 3;
  static final int FAILED_PRECONDITION = 9;

  private final int code;

  /** Called by the native glue; the message crosses JNI as UTF-8. */
  NativeStatusException(int code, byte[] utf8Message) {
    super(new String(utf8Message, StandardCharsets.UTF_8));
    this.code = code;
  }

  /** The plugin's status code. */
  public int getCode() {
    return code;
  }
}

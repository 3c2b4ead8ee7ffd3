// SPDX-License-Identifier: Apache-2.0
package org.example.registryconsul.shardingsphere;

import java.nio.charset.StandardCharsets;

/**
 * Strings cross the bridge as UTF-8 bytes. Encoding is strict: a string that is not valid UTF-16
 * (an unpaired surrogate) is refused rather than silently stored as '?'.
 */
final class Utf8 {
  private Utf8() {}

  /** How much of a refused string an error shows. */
  private static final int SHOWN = 200;

  /**
   * The UTF-8 bytes of {@code text}, which the plugin reads as a C string (a key, a lock name, a
   * prop); {@code what} names it in errors ("key", "prop namespace"). A NUL character is refused:
   * the C string would end there, and the plugin would act on another key than the caller's.
   */
  static byte[] encode(String text, String what) {
    if (text == null) {
      throw new IllegalArgumentException(what + " must not be null");
    }
    int nul = text.indexOf('\0');
    if (nul >= 0) {
      throw new IllegalArgumentException(
          what
              + " \""
              + shown(text)
              + "\" holds a NUL character at index "
              + nul
              + ", which the plugin's C interface cannot carry");
    }
    int unpaired = firstUnpaired(text);
    if (unpaired >= 0) {
      throw new IllegalArgumentException(
          what + " is not valid UTF-16: unpaired surrogate at index " + unpaired);
    }
    // Valid UTF-16 encodes exactly, so the JDK's fast path is strict here.
    return text.getBytes(StandardCharsets.UTF_8);
  }

  /**
   * The bytes of the value of {@code key}, which may hold NUL characters (a value crosses with
   * its length); its errors name the key (built only on error).
   */
  static byte[] value(String value, String key) {
    if (value == null) {
      throw new IllegalArgumentException("value of " + key + " must not be null");
    }
    int unpaired = firstUnpaired(value);
    if (unpaired >= 0) {
      throw new IllegalArgumentException(
          "value of " + key + " is not valid UTF-16: unpaired surrogate at index " + unpaired);
    }
    return value.getBytes(StandardCharsets.UTF_8);
  }

  /** A key: non-null, non-empty, valid UTF-16 (the plugin checks the rest and names the key). */
  static byte[] key(String key) {
    if (key != null && key.isEmpty()) {
      throw new IllegalArgumentException("key must not be empty");
    }
    return encode(key, "key");
  }

  /** Bytes read from Consul; bytes that are not UTF-8 (written by another tool) become U+FFFD. */
  static String decode(byte[] bytes) {
    return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
  }

  /** {@code text} for an error: NUL as \\u0000, at most SHOWN characters. */
  private static String shown(String text) {
    String head = text.length() > SHOWN ? text.substring(0, SHOWN) : text;
    String escaped = head.replace("\0", "\\u0000");
    return text.length() > SHOWN ? escaped + "\"... (" + text.length() + " characters)" : escaped;
  }

  private static int firstUnpaired(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < text.length()
          && Character.isLowSurrogate(text.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        return i;
      }
    }
    return -1;
  }
}

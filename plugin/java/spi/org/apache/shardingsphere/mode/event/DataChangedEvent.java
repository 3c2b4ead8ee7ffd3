// Compile-only declaration of ShardingSphere 5.5's DataChangedEvent, written from its signatures; never
// shipped (at run time ShardingSphere's own class is used).
package org.apache.shardingsphere.mode.event;

public final class DataChangedEvent {
  public enum Type {
    ADDED,
    UPDATED,
    DELETED,
    IGNORED
  }

  private final String key;
  private final String value;
  private final Type type;

  public DataChangedEvent(String key, String value, Type type) {
    this.key = key;
    this.value = value;
    this.type = type;
  }

  public String getKey() {
    return key;
  }

  public String getValue() {
    return value;
  }

  public Type getType() {
    return type;
  }
}

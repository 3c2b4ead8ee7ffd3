// Compile-only declaration of ShardingSphere 5.5's DataChangedEventListener, written from its signatures; never
// shipped (at run time ShardingSphere's own class is used).
package org.apache.shardingsphere.mode.repository.cluster.listener;

import org.apache.shardingsphere.mode.event.DataChangedEvent;

public interface DataChangedEventListener {
  void onChange(DataChangedEvent event);
}

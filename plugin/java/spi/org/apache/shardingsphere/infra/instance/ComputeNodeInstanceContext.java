// Compile-only declaration of ShardingSphere 5.5's ComputeNodeInstanceContext, written from its signatures; never
// shipped (at run time ShardingSphere's own class is used).
// The bridge never calls it: during init its lock context and worker-id generator are not set.
package org.apache.shardingsphere.infra.instance;

public final class ComputeNodeInstanceContext {}

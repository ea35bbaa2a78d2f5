import type { Cluster, Redis } from 'ioredis';

const CHUNK = 5_000;

/**
 * A per-task stream exists before a tab subscribes to it (the task wrote its start). Unseeded, a
 * quiet workload would create most of its keys inside the measured step (at 50,000 streams and
 * 10,000 events/s each key gets its first entry there), and key creation is not what it measures.
 * Subscribers read live from `$`, so the seed entry is never delivered. On a cluster client each
 * XADD goes to its stream's node; ioredis writes them without waiting for replies, so a chunk is
 * pipelined either way.
 */
export async function seedStreams(client: Redis | Cluster, streams: readonly string[]): Promise<void> {
  for (let from = 0; from < streams.length; from += CHUNK) {
    const replies = await Promise.allSettled(streams.slice(from, from + CHUNK).map((s) => client.xadd(s, '*', 'data', '{"seed":true}')));
    const failed = replies.find((r) => r.status === 'rejected');
    if (failed !== undefined) throw new Error(`seeding the task streams failed: ${String(failed.reason)}`);
  }
}

import type { Redis } from 'ioredis';
import { createPublisher } from '@streamgate/server';
import { demoStream } from '@streamgate/auth';
import type { StreamId } from '@streamgate/protocol';

/**
 * Publishes seq = from … to-1 on `demo:<stream>` in order through the real publisher, in windows
 * of concurrent XADDs on one connection (Redis keeps their order). Returns the ids.
 */
export async function publishSequence(redis: Redis, stream: string, from: number, to: number, window = 100): Promise<StreamId[]> {
  const publisher = createPublisher({ redis, maxLen: 1_000_000 });
  const ref = demoStream.for(stream);
  const ids: StreamId[] = [];
  for (let start = from; start < to; start += window) {
    const batch = [];
    for (let seq = start; seq < Math.min(to, start + window); seq++) {
      batch.push(publisher.publish(ref, { seq, text: `event ${seq}`, at: new Date().toISOString() }));
    }
    for (const result of await Promise.all(batch)) {
      if (!result.ok) throw new Error(`publish failed: ${result.error.code}: ${result.error.message}`);
      ids.push(result.id);
    }
  }
  return ids;
}

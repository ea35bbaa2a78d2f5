import type { NatsConnection } from '@nats-io/transport-node';
import { createJetStreamWriter } from '@streamgate/server/jetstream';
import type { StreamRef } from '@streamgate/server';
import { newLatencyHistogram } from './latencyHistogram.js';
import { nowMs } from './openLoop.js';
import { payloadOf } from './Publisher.js';
import type { BenchPayload, Publisher } from './Publisher.js';

/**
 * The relay-jetstream series' writer: streamgate's own JetStream writer (`createJetStreamWriter`
 * from @streamgate/server), as the Redis relay series write through `createPublisher`: one
 * publish per entry, its payload encoded as a Redis entry's `data` is (the JSON text of
 * payloadOf), each waiting for JetStream's ack, which is the write latency recorded. The NATS
 * client sends what one tick queued in one write, as auto-pipelining does for the Redis publisher.
 */
export function jetStreamPublisher(connection: NatsConnection, stream: string): Publisher {
  const writer = createJetStreamWriter({ connection, stream });
  const refs = new Map<string, StreamRef<BenchPayload>>();
  let failures = 0;
  let writes = newLatencyHistogram();
  const refOf = (name: string): StreamRef<BenchPayload> => {
    const known = refs.get(name);
    if (known !== undefined) return known;
    // No schema: the bench's payload is its own, as with the Redis publisher.
    const ref: StreamRef<BenchPayload> = { name, schema: undefined };
    refs.set(name, ref);
    return ref;
  };
  return {
    publish(name, seq, intendedMs) {
      void writer.publish(refOf(name), payloadOf(seq, intendedMs)).then((result) => {
        writes.recordValue(Math.max(1, Math.round((nowMs() - intendedMs) * 1000)));
        // Counted, and the first few told: a lost write shows up as undelivered in the step.
        if (!result.ok && failures++ < 5) process.stderr.write(`jetstream publisher: ${result.error.code}: ${result.error.message}\n`);
      });
    },
    flush() {
      // The NATS client flushes what this tick queued.
    },
    retarget() {
      // The nats-server did not move.
    },
    takeWriteLatency() {
      const taken = writes;
      writes = newLatencyHistogram();
      return taken;
    },
    async close() {
      // The connection is the target's, closed by its stop().
      await writer.close();
    },
  };
}

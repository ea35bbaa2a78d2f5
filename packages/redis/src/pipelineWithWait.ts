import type { ChainableCommander } from 'ioredis';
import { isClusterClient } from './openRedis.js';
import type { RedisClient } from './openRedis.js';

/** `WAIT count timeoutMs` after a write, on the connection that made it. */
export type ReplicaWait = { readonly count: number; readonly timeoutMs: number };

/** The write's reply and how many replicas WAIT counted (0 when WAIT itself failed; `waitError` says why). */
export type ReplicatedReply = { reply: unknown; replicas: number; waitError?: string };

// A MOVED or ASK answer means the node did not apply the write; in a pipeline ioredis hands it
// back instead of following it (the WAIT beside it succeeded, so the pipeline is not "all the
// same error"). Up to this many more attempts, each after the slot map is read again.
const MAX_REDIRECTED_ATTEMPTS = 2;

const isReplyError = (error: Error, pattern: RegExp): boolean => error.name === 'ReplyError' && pattern.test(error.message);

function refreshSlots(client: RedisClient): Promise<void> {
  if (!isClusterClient(client)) return Promise.resolve();
  return new Promise((resolve) => client.refreshSlotsCache(() => resolve()));
}

/**
 * Queues one write (`queue`: a command, or a script as EVAL) and pipelines `WAIT count timeoutMs`
 * right behind it. Pipelined, the two leave on the same connection: on a Cluster ioredis sends a
 * pipeline to the node of its keyed command's slot and the keyless WAIT rides along, so it counts
 * the replicas of the node that took the write. WAIT measures this connection's own writes, which
 * is why it cannot be sent on its own (on a Cluster it would go to a random node). A script goes
 * as EVAL, never EVALSHA: NOSCRIPT (a fresh or failed-over node) would still run the WAIT for its
 * whole timeout with nothing written, and a retry would wait again. Rejects with the write's error
 * as ioredis does. The publisher's `waitForReplicas` and ingest's lease grants use it.
 */
export async function pipelineWithWait(
  client: RedisClient,
  queue: (pipeline: ChainableCommander) => void,
  wait: ReplicaWait,
): Promise<ReplicatedReply> {
  for (let attempt = 0; ; attempt += 1) {
    const pipeline = client.pipeline();
    queue(pipeline);
    pipeline.wait(wait.count, wait.timeoutMs);
    const results = (await pipeline.exec()) ?? [];
    const [writeError, reply] = results[0] ?? [new Error('the pipeline returned no reply for the write'), null];
    const [waitError, waitReply] = results[1] ?? [new Error('the pipeline returned no reply for WAIT'), null];
    if (writeError !== null) {
      if (isReplyError(writeError, /^(MOVED|ASK) /) && attempt < MAX_REDIRECTED_ATTEMPTS) {
        await refreshSlots(client);
        continue;
      }
      throw writeError;
    }
    if (waitError !== null) return { reply, replicas: 0, waitError: waitError.message };
    return { reply, replicas: typeof waitReply === 'number' ? waitReply : 0 };
  }
}

import type { ChainableCommander } from 'ioredis';
import { isClusterClient } from '@streamgate/redis';
import type { RedisClient } from '@streamgate/redis';
import {
  IDEMPOTENT_XADD_SCRIPT,
  IDEMPOTENT_XADD_SHA,
  idempotentXadd,
  idempotentXaddArgs,
  isNoScript,
  parseIdempotentXaddReply,
} from './idempotentXadd.js';
import type { IdempotentXaddRequest } from './idempotentXadd.js';

/** One entry to append: a plain XADD, or the idempotent script (stream and record key in one slot). */
export type EntryWrite =
  { kind: 'xadd'; stream: string; maxLen: number; data: string } | { kind: 'idempotent'; request: IdempotentXaddRequest };

/** `WAIT count timeoutMs` after the write, on the connection that made it. */
export type ReplicaWait = { count: number; timeoutMs: number };

/**
 * `replicas`: how many replicas acknowledged the write, when a wait was asked for (`waitError`:
 * why WAIT itself failed; then `replicas` is 0, as none was confirmed).
 */
export type WriteOutcome =
  { ok: true; id: string; duplicate: boolean; replicas?: number; waitError?: string } | { ok: false; reply: unknown };

// A MOVED or ASK answer means the node did not apply the write; in a pipeline ioredis hands it
// back instead of following it (the WAIT beside it succeeded, so the pipeline is not "all the
// same error"). Up to this many more attempts, each after the slot map is read again.
const MAX_REDIRECTED_ATTEMPTS = 2;

const isRedirection = (error: unknown): boolean =>
  error instanceof Error && error.name === 'ReplyError' && /^(MOVED|ASK) /.test(error.message);

function refreshSlots(client: RedisClient): Promise<void> {
  if (!isClusterClient(client)) return Promise.resolve();
  return new Promise((resolve) => client.refreshSlotsCache(() => resolve()));
}

/**
 * Writes the entry; with `wait`, pipelines `WAIT count timeoutMs` right behind it. Pipelined, the
 * two leave on the same connection: on a Cluster ioredis sends a pipeline to the node of its
 * keyed commands' slot, and WAIT (no key) rides along, so it counts the replicas of the node that
 * took the write. WAIT measures this connection's own writes, which is why it cannot be sent on
 * its own (on a Cluster it would go to a random node). Rejects as ioredis does on a failed write.
 */
export async function writeEntry(client: RedisClient, write: EntryWrite, wait: ReplicaWait | undefined): Promise<WriteOutcome> {
  if (wait === undefined) {
    if (write.kind === 'idempotent') return idempotentXadd(client, write.request);
    const id = await client.xadd(write.stream, 'MAXLEN', '~', write.maxLen, '*', 'data', write.data);
    return id === null ? { ok: false, reply: null } : { ok: true, id, duplicate: false };
  }
  let useEval = false;
  for (let attempt = 0; ; attempt += 1) {
    const pipeline = client.pipeline();
    addWrite(pipeline, write, useEval);
    pipeline.wait(wait.count, wait.timeoutMs);
    const results = (await pipeline.exec()) ?? [];
    const [writeError, writeReply] = results[0] ?? [new Error('the pipeline returned no reply for the write'), null];
    const [waitError, waitReply] = results[1] ?? [new Error('the pipeline returned no reply for WAIT'), null];
    if (writeError !== null) {
      if (write.kind === 'idempotent' && !useEval && isNoScript(writeError)) {
        useEval = true;
        continue;
      }
      if (isRedirection(writeError) && attempt < MAX_REDIRECTED_ATTEMPTS) {
        await refreshSlots(client);
        continue;
      }
      throw writeError;
    }
    const outcome: WriteOutcome =
      write.kind === 'idempotent'
        ? parseIdempotentXaddReply(writeReply)
        : typeof writeReply === 'string'
          ? { ok: true, id: writeReply, duplicate: false }
          : { ok: false, reply: writeReply };
    if (!outcome.ok) return outcome;
    if (waitError !== null) return { ...outcome, replicas: 0, waitError: waitError.message };
    return { ...outcome, replicas: typeof waitReply === 'number' ? waitReply : 0 };
  }
}

function addWrite(pipeline: ChainableCommander, write: EntryWrite, useEval: boolean): void {
  if (write.kind === 'xadd') {
    pipeline.xadd(write.stream, 'MAXLEN', '~', write.maxLen, '*', 'data', write.data);
    return;
  }
  const args = idempotentXaddArgs(write.request);
  if (useEval) pipeline.eval(IDEMPOTENT_XADD_SCRIPT, ...args);
  else pipeline.evalsha(IDEMPOTENT_XADD_SHA, ...args);
}

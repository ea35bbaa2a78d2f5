import type { ChainableCommander } from 'ioredis';
import { pipelineWithWait } from '@streamgate/redis';
import type { RedisClient, ReplicaWait } from '@streamgate/redis';
import {
  IDEMPOTENT_XADD_SCRIPT,
  IDEMPOTENT_XADD_SHA,
  idempotentXadd,
  idempotentXaddArgs,
  parseIdempotentXaddReply,
} from './idempotentXadd.js';
import type { IdempotentXaddRequest } from './idempotentXadd.js';

/** One entry to append: a plain XADD, or the idempotent script (stream and record key in one slot). */
export type EntryWrite =
  { kind: 'xadd'; stream: string; maxLen: number; data: string } | { kind: 'idempotent'; request: IdempotentXaddRequest };

/**
 * `replicas`: how many replicas acknowledged the write, when a wait was asked for (`waitError`:
 * why WAIT itself failed; then `replicas` is 0, as none was confirmed).
 */
export type WriteOutcome =
  { ok: true; id: string; duplicate: boolean; replicas?: number; waitError?: string } | { ok: false; reply: unknown };

/**
 * Writes the entry; with `wait`, pipelines `WAIT count timeoutMs` right behind it on the same
 * connection (pipelineWithWait). Rejects as ioredis does on a failed write.
 */
export async function writeEntry(client: RedisClient, write: EntryWrite, wait: ReplicaWait | undefined): Promise<WriteOutcome> {
  if (wait === undefined) {
    if (write.kind === 'idempotent') return idempotentXadd(client, write.request);
    const id = await client.xadd(write.stream, 'MAXLEN', '~', write.maxLen, '*', 'data', write.data);
    return id === null ? { ok: false, reply: null } : { ok: true, id, duplicate: false };
  }
  const { reply, replicas, waitError } = await pipelineWithWait(client, (pipeline, useEval) => addWrite(pipeline, write, useEval), wait, {
    scriptFallback: write.kind === 'idempotent',
  });
  const outcome: WriteOutcome =
    write.kind === 'idempotent'
      ? parseIdempotentXaddReply(reply)
      : typeof reply === 'string'
        ? { ok: true, id: reply, duplicate: false }
        : { ok: false, reply };
  if (!outcome.ok) return outcome;
  return waitError === undefined ? { ...outcome, replicas } : { ...outcome, replicas, waitError };
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

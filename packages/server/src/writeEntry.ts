import type { ChainableCommander } from 'ioredis';
import { pipelineWithWait } from '@streamgate/redis';
import type { RedisClient, ReplicaWait } from '@streamgate/redis';
import { IDEMPOTENT_XADD_SCRIPT, idempotentXadd, idempotentXaddArgs, parseIdempotentXaddReply } from './idempotentXadd.js';
import type { IdempotentXaddRequest } from './idempotentXadd.js';
import { LIVE_XADD_SCRIPT, liveXaddArgs } from './liveXadd.js';
import { liveXaddBatcher } from './LiveXaddBatcher.js';

/**
 * One entry to append: the live XADD script (liveXadd, or LiveXaddBatcher's for several), or the idempotent one (stream and record
 * key in one slot). Either publishes the entry on the stream's live channel as it writes it.
 */
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
  const batcher = liveXaddBatcher(client);
  // Plain writes queued earlier in this tick go before any write that bypasses the batcher, so
  // entries land in the order their publishes were made (one connection sends in call order).
  // Not across a NOSCRIPT (a node that lost its scripts): that write is sent again after its
  // reply, behind what was sent meanwhile.
  if (wait !== undefined) {
    batcher.flush();
    return writeAndWait(client, write, wait);
  }
  if (write.kind === 'idempotent') {
    batcher.flush();
    return idempotentXadd(client, write.request);
  }
  // The plain writes of a tick share one script call (LiveXaddBatcher): Redis pays a script's
  // fixed cost once for them, not once per entry.
  const reply = await batcher.write(write);
  return typeof reply === 'string' ? { ok: true, id: reply, duplicate: false } : { ok: false, reply };
}

async function writeAndWait(client: RedisClient, write: EntryWrite, wait: ReplicaWait): Promise<WriteOutcome> {
  // EVAL (pipelineWithWait says why): the body costs bytes, not a round trip.
  const { reply, replicas, waitError } = await pipelineWithWait(client, (pipeline) => addWrite(client, pipeline, write), wait);
  const outcome: WriteOutcome =
    write.kind === 'idempotent'
      ? parseIdempotentXaddReply(reply)
      : typeof reply === 'string'
        ? { ok: true, id: reply, duplicate: false }
        : { ok: false, reply };
  if (!outcome.ok) return outcome;
  return waitError === undefined ? { ...outcome, replicas } : { ...outcome, replicas, waitError };
}

function addWrite(client: RedisClient, pipeline: ChainableCommander, write: EntryWrite): void {
  if (write.kind === 'xadd') pipeline.eval(LIVE_XADD_SCRIPT, ...liveXaddArgs(client, write));
  else pipeline.eval(IDEMPOTENT_XADD_SCRIPT, ...idempotentXaddArgs(client, write.request));
}

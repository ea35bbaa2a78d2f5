import type { Cluster } from 'ioredis';
import type { RedisClient } from '@streamgate/redis';
import { isClusterClient, keySlot } from '@streamgate/redis';
import { groupIndexes } from './groupIndexes.js';
import { toError } from './redisFailure.js';

/** One command of a pipeline; `key` routes it on a Redis Cluster. */
export interface KeyedCall {
  readonly key: string;
  readonly command: string;
  readonly args: ReadonlyArray<string | number | Buffer>;
  /** The reply as bytes (callBuffer). */
  readonly buffer?: boolean;
}

/** What `exec` resolves to: one `[error, reply]` pair per queued command, in order. */
export type PipelineReplies = ReadonlyArray<[Error | null, unknown]>;

/**
 * A per-node bound on a pipeline's answer. `stalled` holds the nodes whose abandoned pipeline has
 * not settled yet: they are not sent another (it would only queue behind the first), their calls
 * fail at once until it settles (answered late, or the connection's commandTimeout).
 */
export interface NodeDeadline {
  readonly ms: number;
  readonly stalled: Set<string>;
}

/**
 * A node's pipeline that had not answered within the caller's deadline: its reply, if one comes,
 * is dropped. Not a ReplyError, so redisFailure calls it a connection failure (retried, never a
 * key's fault).
 */
export class NodeDeadlineError extends Error {
  override readonly name = 'NodeDeadlineError';
  constructor(
    readonly node: string,
    readonly deadlineMs: number,
  ) {
    super(`node ${node} did not answer a pipelined read within ${deadlineMs} ms`);
  }
}

/**
 * The calls as pipelines, replies in the calls' order. One instance: one pipeline. A Redis
 * Cluster refuses a pipeline whose keys live on several nodes, so there the calls are split into
 * one pipeline per node (by the slot map ioredis holds now; a slot that moved meanwhile is
 * redirected by ioredis), sent together; a node's pipeline that fails is its calls' error only,
 * and is told to `onNodeError`. With `deadlineMs`, a node that has not answered by then is
 * abandoned the same way (NodeDeadlineError): one frozen primary must not hold up every other
 * node's replies. On one instance a failed pipeline rejects, as `exec` does.
 */
export async function pipelineByNode(
  client: RedisClient,
  calls: readonly KeyedCall[],
  onNodeError: (error: Error) => void,
  deadline?: NodeDeadline,
): Promise<PipelineReplies> {
  if (!isClusterClient(client)) return exec(client, calls);
  const byNode = groupIndexes(calls, (call) => nodeGroup(client, call.key));
  const replies: Array<[Error | null, unknown]> = new Array<[Error | null, unknown]>(calls.length);
  await Promise.all(
    [...byNode].map(async ([node, indexes]) => {
      let part: PipelineReplies;
      try {
        if (deadline?.stalled.has(node) === true) throw new NodeDeadlineError(node, deadline.ms);
        part = await withDeadline(
          exec(
            client,
            indexes.map((i) => calls[i] as KeyedCall),
          ),
          node,
          deadline,
        );
      } catch (thrown) {
        const error = toError(thrown);
        onNodeError(error);
        part = indexes.map(() => [error, null]);
      }
      indexes.forEach((index, j) => (replies[index] = part[j] ?? [new Error(`no reply ${j} in a pipeline`), null]));
    }),
  );
  return replies;
}

function withDeadline<T>(sent: Promise<T>, node: string, deadline: NodeDeadline | undefined): Promise<T> {
  if (deadline === undefined) return sent;
  let timer: NodeJS.Timeout | undefined;
  let settled = false;
  const noteSettled = (): void => {
    settled = true;
  };
  sent.then(noteSettled, noteSettled);
  const missed = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      // Timers run before the loop polls its sockets: a reply that arrived while this process was
      // busy (its own event loop late, not the node) is read in the poll that follows. Judge after
      // it, so a relay's own stall is never blamed on a node that answered in time.
      setImmediate(() => {
        if (settled) return;
        deadline.stalled.add(node);
        // Whatever the abandoned pipeline settles with is dropped (its failure was reported as this
        // miss); only then is the node sent reads again.
        sent.then(
          () => deadline.stalled.delete(node),
          () => deadline.stalled.delete(node),
        );
        reject(new NodeDeadlineError(node, deadline.ms));
      });
    }, deadline.ms);
  });
  return Promise.race([sent, missed]).finally(() => clearTimeout(timer));
}

/** The nodes serving the key's slot, as ioredis groups its own pipelines. */
function nodeGroup(cluster: Cluster, key: string): string {
  return cluster.slots[keySlot(key)]?.join(',') ?? '';
}

async function exec(client: RedisClient, calls: readonly KeyedCall[]): Promise<PipelineReplies> {
  const pipeline = client.pipeline();
  for (const call of calls) {
    if (call.buffer === true) pipeline.callBuffer(call.command, [...call.args]);
    else pipeline.call(call.command, [...call.args]);
  }
  return (await pipeline.exec()) ?? [];
}

import { createHash } from 'node:crypto';
import { isClusterClient, keySlot, LIVE_PUBLISH_LUA, livePublishArgs } from '@streamgate/redis';
import type { RedisClient } from '@streamgate/redis';
import { isNoScript } from './idempotentXadd.js';
import type { LiveXaddRequest } from './liveXadd.js';

/*
 * The live XADD of several entries in one script (docs/protocol.md §11 allows several entries per
 * script, each published right after its own XADD): Redis runs one script call for the writes
 * a tick queued instead of one each. Each entry is written and published exactly as
 * LIVE_XADD_SCRIPT does; `prev` is read per entry, so two entries of one stream chain. An entry
 * whose read or XADD fails (a key of another type) is that entry's error only: the others are
 * written, and the reply holds the error in its place.
 * KEYS: the streams, in order (one slot on a Redis Cluster).  ARGV: PUBLISH or SPUBLISH, then per
 * entry its MAXLEN (approximate), data (JSON text) and live channel ('' for none).
 * Reply: per entry its id, or the error.
 */
/** One entry's write in a batch script: its reply, the id or the error of its read or XADD. */
const WRITE_ENTRY_LUA = `${LIVE_PUBLISH_LUA}
local function write_entry(key, maxlen, data, channel, command)
  local last = redis.pcall('XREVRANGE', key, '+', '-', 'COUNT', 1)
  if last.err then return last end
  local prev = last[1] and last[1][1] or '0-0'
  local id = redis.pcall('XADD', key, 'MAXLEN', '~', maxlen, '*', 'data', data)
  if type(id) ~= 'table' then live_publish(channel, command, prev, id, data) end
  return id
end
`;

export const LIVE_XADD_BATCH_SCRIPT = `${WRITE_ENTRY_LUA}
local out = {}
for i = 1, #KEYS do
  local at = 2 + (i - 1) * 3
  out[i] = write_entry(KEYS[i], ARGV[at], ARGV[at + 1], ARGV[at + 2], ARGV[1])
end
return out
`;

export const LIVE_XADD_BATCH_SHA = createHash('sha1').update(LIVE_XADD_BATCH_SCRIPT).digest('hex');

/**
 * The same writes for the keys of several slots served by one Redis Cluster node (Redis 7's
 * `allow-cross-slot-keys` flag). With one script per slot, 10,000 per-task streams spread over
 * 16,384 slots gave one script call per entry: a cluster cost its primaries 1.7–2.3× what one
 * Redis did. A cluster routes a script by its declared keys, which must share a slot, so KEYS
 * holds only the first stream (it picks the node) and ARGV the rest: PUBLISH or SPUBLISH, then
 * per entry its stream, MAXLEN, data and live channel. An entry whose stream this node does not
 * serve (the client's slot table was stale) fails on its first read, before anything is
 * written, and goes again in a script of its own slot; so does a batch the server refuses.
 */
export const LIVE_XADD_NODE_BATCH_SCRIPT = `#!lua flags=allow-cross-slot-keys
${WRITE_ENTRY_LUA}
local out = {}
for i = 1, (#ARGV - 1) / 4 do
  local at = 2 + (i - 1) * 4
  out[i] = write_entry(ARGV[at], ARGV[at + 1], ARGV[at + 2], ARGV[at + 3], ARGV[1])
end
return out
`;

export const LIVE_XADD_NODE_BATCH_SHA = createHash('sha1').update(LIVE_XADD_NODE_BATCH_SCRIPT).digest('hex');

/** A cluster's answers that say nothing ran for this batch or entry: it goes again in its slot's own script. */
const NOT_RUN_HERE = /^(MOVED|ASK|CROSSSLOT|TRYAGAIN|CLUSTERDOWN)\b|Too many Cluster redirections|non local key/;
/** A server that cannot run the flagged script (before Redis 7): its batches go per slot from then on. */
const NO_SCRIPT_FLAGS = /Error compiling script|Unexpected engine|shebang/i;

/** Entries per script call at most: a call holds Redis for its whole length. */
const MAX_BATCH = 100;
/** Data bytes (UTF-16 units, near enough) per call at most, past which a call takes no more entries. */
const MAX_BATCH_CHARS = 256 * 1024;

interface Queued {
  readonly request: LiveXaddRequest;
  readonly resolve: (reply: unknown) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Gathers the live XADDs sent through one client within a tick (process.nextTick, as ioredis's
 * auto-pipelining does) and sends them as one batch script per hash slot (one per client on an
 * instance). Each write settles as liveXadd's would: with its id or its own error reply, or
 * rejected with the call's error (the connection's, or the script's when it could not run).
 */
export class LiveXaddBatcher {
  private queued: Queued[] = [];
  /** Whether a batch may span the slots of one cluster node (until a server could not run the flagged script). */
  private crossSlot = true;

  constructor(private readonly redis: RedisClient) {}

  write(request: LiveXaddRequest): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.queued.length === 0) process.nextTick(() => this.flush());
      this.queued.push({ request, resolve, reject });
    });
  }

  /**
   * Sends what this tick queued now. A write that bypasses the batcher (an idempotent one, or one
   * that waits for replicas) calls this first: ioredis sends one connection's commands in call
   * order, so the entries land in the order their publishes were made (but for an entry sent
   * again after a cluster node did not serve it: a later one of its stream may land first).
   */
  flush(): void {
    if (this.queued.length === 0) return;
    const queued = this.queued;
    this.queued = [];
    // One group per node on a cluster (the node serving each slot, as the client last heard),
    // by slot where it has not heard; one group on an instance.
    const slotsOf = isClusterClient(this.redis) ? this.redis.slots : null;
    const byNode = groupBy(queued, (q) => {
      if (slotsOf === null) return 'instance';
      const slot = keySlot(q.request.stream);
      return slotsOf[slot]?.[0] ?? `slot ${slot}`;
    });
    for (const group of byNode) for (const batch of splitBatches(group)) void this.sendBatch(batch);
  }

  /** One call for the batch; its writes a node did not take go again, one script per slot. */
  private async sendBatch(batch: readonly Queued[]): Promise<void> {
    const bySlot = (writes: readonly Queued[]): Queued[][] => groupBy(writes, (q) => keySlot(q.request.stream));
    if (!isClusterClient(this.redis)) {
      await this.send(batch, false);
      return;
    }
    const slots = bySlot(batch);
    if (slots.length === 1 || !this.crossSlot) {
      for (const group of slots) void this.send(group, false);
      return;
    }
    const again = await this.send(batch, true);
    for (const group of bySlot(again)) void this.send(group, false);
  }

  /**
   * Sends the batch as one script call and settles its writes, except (for a call across slots)
   * those the node did not run, which it returns.
   */
  private async send(batch: readonly Queued[], crossSlot: boolean): Promise<readonly Queued[]> {
    const command = livePublishArgs(this.redis, batch[0]?.request.stream ?? '')[1];
    const channel = (q: Queued): string => livePublishArgs(this.redis, q.request.stream)[0];
    const [script, sha, keys, args] = crossSlot
      ? [
          LIVE_XADD_NODE_BATCH_SCRIPT,
          LIVE_XADD_NODE_BATCH_SHA,
          [batch[0]?.request.stream ?? ''],
          [command, ...batch.flatMap((q) => [q.request.stream, q.request.maxLen, q.request.data, channel(q)])],
        ]
      : [
          LIVE_XADD_BATCH_SCRIPT,
          LIVE_XADD_BATCH_SHA,
          batch.map((q) => q.request.stream),
          [command, ...batch.flatMap((q) => [q.request.maxLen, q.request.data, channel(q)])],
        ];
    let reply: unknown;
    try {
      try {
        reply = await this.redis.evalsha(sha, keys.length, ...keys, ...args);
      } catch (error) {
        if (!isNoScript(error)) throw error;
        reply = await this.redis.eval(script, keys.length, ...keys, ...args);
      }
    } catch (error) {
      // Only an answer that says the script did not run sends the writes again: any other
      // (a dropped connection) may come after they were written.
      const unflagged = crossSlot && error instanceof Error && NO_SCRIPT_FLAGS.test(error.message);
      if (unflagged) this.crossSlot = false;
      if (unflagged || (crossSlot && error instanceof Error && NOT_RUN_HERE.test(error.message))) return batch;
      for (const q of batch) q.reject(error);
      return [];
    }
    const replies = Array.isArray(reply) ? (reply as unknown[]) : [];
    const again: Queued[] = [];
    batch.forEach((q, i) => {
      const one = replies[i];
      if (crossSlot && one instanceof Error && NOT_RUN_HERE.test(one.message)) again.push(q);
      else if (one instanceof Error) q.reject(one);
      else q.resolve(one);
    });
    return again;
  }
}

/** The writes in groups of one key each, in the order each key first appears. */
function groupBy<K>(writes: readonly Queued[], keyOf: (q: Queued) => K): Queued[][] {
  const groups = new Map<K, Queued[]>();
  for (const q of writes) {
    const key = keyOf(q);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [q]);
    else group.push(q);
  }
  return [...groups.values()];
}

/** A slot's writes in calls of at most MAX_BATCH entries and about MAX_BATCH_CHARS of data (one entry each at least). */
function splitBatches(group: readonly Queued[]): Queued[][] {
  const out: Queued[][] = [];
  let current: Queued[] = [];
  let chars = 0;
  for (const q of group) {
    if (current.length > 0 && (current.length >= MAX_BATCH || chars + q.request.data.length > MAX_BATCH_CHARS)) {
      out.push(current);
      current = [];
      chars = 0;
    }
    current.push(q);
    chars += q.request.data.length;
  }
  if (current.length > 0) out.push(current);
  return out;
}

const batchers = new WeakMap<RedisClient, LiveXaddBatcher>();

/** The batcher of a client, made on first use. */
export function liveXaddBatcher(redis: RedisClient): LiveXaddBatcher {
  const known = batchers.get(redis);
  if (known !== undefined) return known;
  const made = new LiveXaddBatcher(redis);
  batchers.set(redis, made);
  return made;
}

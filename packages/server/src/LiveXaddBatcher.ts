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
export const LIVE_XADD_BATCH_SCRIPT = `${LIVE_PUBLISH_LUA}
local out = {}
for i = 1, #KEYS do
  local at = 2 + (i - 1) * 3
  local last = redis.pcall('XREVRANGE', KEYS[i], '+', '-', 'COUNT', 1)
  if last.err then
    out[i] = last
  else
    local prev = last[1] and last[1][1] or '0-0'
    local id = redis.pcall('XADD', KEYS[i], 'MAXLEN', '~', ARGV[at], '*', 'data', ARGV[at + 1])
    if type(id) == 'table' then
      out[i] = id
    else
      live_publish(ARGV[at + 2], ARGV[1], prev, id, ARGV[at + 1])
      out[i] = id
    end
  end
end
return out
`;

export const LIVE_XADD_BATCH_SHA = createHash('sha1').update(LIVE_XADD_BATCH_SCRIPT).digest('hex');

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
   * order, so the entries land in the order their publishes were made.
   */
  flush(): void {
    if (this.queued.length === 0) return;
    const queued = this.queued;
    this.queued = [];
    const cluster = isClusterClient(this.redis);
    const groups = new Map<number, Queued[]>();
    for (const q of queued) {
      const slot = cluster ? keySlot(q.request.stream) : 0;
      const group = groups.get(slot);
      if (group === undefined) groups.set(slot, [q]);
      else group.push(q);
    }
    for (const group of groups.values()) for (const batch of splitBatches(group)) void this.send(batch);
  }

  private async send(batch: readonly Queued[]): Promise<void> {
    const keys = batch.map((q) => q.request.stream);
    const command = livePublishArgs(this.redis, keys[0] ?? '')[1];
    const args = [command, ...batch.flatMap((q) => [q.request.maxLen, q.request.data, livePublishArgs(this.redis, q.request.stream)[0]])];
    let reply: unknown;
    try {
      try {
        reply = await this.redis.evalsha(LIVE_XADD_BATCH_SHA, keys.length, ...keys, ...args);
      } catch (error) {
        if (!isNoScript(error)) throw error;
        reply = await this.redis.eval(LIVE_XADD_BATCH_SCRIPT, keys.length, ...keys, ...args);
      }
    } catch (error) {
      for (const q of batch) q.reject(error);
      return;
    }
    const replies = Array.isArray(reply) ? (reply as unknown[]) : [];
    batch.forEach((q, i) => {
      const one = replies[i];
      if (one instanceof Error) q.reject(one);
      else q.resolve(one);
    });
  }
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

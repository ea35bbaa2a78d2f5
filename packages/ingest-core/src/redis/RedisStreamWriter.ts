import { LIVE_PUBLISH_LUA, livePublishArgs } from '@streamgate/redis';
import type { RedisClient } from '@streamgate/redis';
import { errorMessage, IngestFailure } from '../IngestError.js';
import { ingestKeys } from './ingestKeys.js';
import type { IngestKeys } from './ingestKeys.js';
import type { Fence, StreamWriter, WriteBatch, WriteOutcome } from '../StreamWriter.js';

/*
 * One script is the whole write step, so no crash can separate an entry from its dedupe key or
 * from the checkpoint that says it was written. Redis does not roll a script back when a command
 * inside it fails, so everything that can fail (fence, key type) is checked before the first write.
 * KEYS: fence, stream, state, dedupe keys… (all in the stream's slot, see ingestKeys, so the
 * script runs on Redis Cluster too)  ARGV: token, dedupe TTL ms, MAXLEN (0 = none), live
 * channel ('' for none), PUBLISH or SPUBLISH, entry count, entry data…, set count, field/value…,
 * del count, field…
 * Each entry is published on the stream's live channel right after its XADD, with the id before
 * it (LIVE_PUBLISH_LUA), so relays deliver it without reading the stream.
 */
const WRITE_SCRIPT = `${LIVE_PUBLISH_LUA}
local fence = redis.call('GET', KEYS[1])
if fence ~= ARGV[1] then return {'fenced', fence or ''} end
local t = redis.call('TYPE', KEYS[2])['ok']
if t ~= 'stream' and t ~= 'none' then return {'wrong_type', t} end
local ttl = ARGV[2]
local maxlen = tonumber(ARGV[3])
local channel = ARGV[4]
local publish = ARGV[5]
local n = tonumber(ARGV[6])
local a = 7
local ids = {}
local dups = 0
local prev = nil
for i = 1, n do
  local data = ARGV[a]
  a = a + 1
  if redis.call('SET', KEYS[3 + i], '1', 'PX', ttl, 'NX') then
    if prev == nil then prev = live_prev(KEYS[2]) end
    if maxlen > 0 then
      ids[i] = redis.call('XADD', KEYS[2], 'MAXLEN', '~', maxlen, '*', 'data', data)
    else
      ids[i] = redis.call('XADD', KEYS[2], '*', 'data', data)
    end
    live_publish(channel, publish, prev, ids[i], data)
    prev = ids[i]
  else
    dups = dups + 1
    ids[i] = ''
  end
end
local ns = tonumber(ARGV[a])
a = a + 1
for i = 1, ns do
  redis.call('HSET', KEYS[3], ARGV[a], ARGV[a + 1])
  a = a + 2
end
local nd = tonumber(ARGV[a])
a = a + 1
for i = 1, nd do
  redis.call('HDEL', KEYS[3], ARGV[a])
  a = a + 1
end
return {'ok', tostring(dups), ids}
`;

export interface RedisStreamWriterOptions {
  /** One target: an instance or a Redis Cluster. With several, one writer per target. */
  readonly redis: RedisClient;
  readonly keyPrefix: string;
  /** How long a dedupe key outlives its write; covers any overlap of two owners or a replay. */
  readonly dedupeTtlMs: number;
  /** Approximate stream cap (XADD MAXLEN ~); 0 keeps everything. */
  readonly maxLen: number;
}

export class RedisStreamWriter implements StreamWriter {
  constructor(private readonly options: RedisStreamWriterOptions) {
    options.redis.defineCommand('streamgateIngestWrite', { lua: WRITE_SCRIPT });
  }

  async write(fence: Fence, batch: WriteBatch): Promise<WriteOutcome> {
    const { redis, keyPrefix, dedupeTtlMs, maxLen } = this.options;
    let keys: IngestKeys;
    try {
      keys = ingestKeys(keyPrefix, fence.key);
    } catch (error) {
      if (error instanceof IngestFailure) return { ok: false, error: error.error };
      throw error;
    }
    const set = Object.entries(batch.stateSet ?? {});
    const del = batch.stateDel ?? [];
    const args: (string | number)[] = [
      3 + batch.entries.length,
      keys.fence,
      fence.key,
      keys.state,
      ...batch.entries.map((e) => keys.dedupe(e.dedupeId)),
      String(fence.token),
      dedupeTtlMs,
      maxLen,
      ...livePublishArgs(redis, fence.key),
      batch.entries.length,
      ...batch.entries.map((e) => e.data),
      set.length,
      ...set.flat(),
      del.length,
      ...del,
    ];
    let reply: unknown;
    try {
      reply = await (redis as unknown as { streamgateIngestWrite(...a: (string | number)[]): Promise<unknown> }).streamgateIngestWrite(
        ...args,
      );
    } catch (error) {
      return { ok: false, error: { code: 'redis_unavailable', retryable: true, message: errorMessage(error) } };
    }
    return parseWriteReply(reply, fence);
  }

  /** The lease grant bumped the fence in the same script: nothing to claim, only the state to read. */
  async loadState({ key }: Fence): Promise<Map<string, string>> {
    const { redis, keyPrefix } = this.options;
    const state = ingestKeys(keyPrefix, key).state;
    const fields = await redis.hgetall(state);
    if (Object.keys(fields).length > 0) return new Map(Object.entries(fields));
    // Before the slot-tag layout the state lived at `<prefix>{<stream>}:state`: a stream first
    // taken after the upgrade carries its checkpoint over instead of restarting from the head.
    // The caller holds the lease, so nothing writes the new key meanwhile.
    const legacy = await redis.hgetall(`${keyPrefix}{${key}}:state`);
    const entries = Object.entries(legacy);
    if (entries.length > 0) await redis.hset(state, legacy);
    return new Map(entries);
  }
}

function parseWriteReply(reply: unknown, fence: Fence): WriteOutcome {
  if (!Array.isArray(reply)) {
    return { ok: false, error: { code: 'redis_unavailable', retryable: true, message: 'unexpected write reply' } };
  }
  const [status, detail, ids] = reply as unknown[];
  if (status === 'fenced') {
    return {
      ok: false,
      error: { code: 'fenced', retryable: false, message: `token ${fence.token} is stale; current fence is ${String(detail)}` },
    };
  }
  if (status === 'wrong_type') {
    return { ok: false, error: { code: 'wrong_type', retryable: false, message: `${fence.key} is a ${String(detail)}, not a stream` } };
  }
  const list = Array.isArray(ids) ? ids.map((id) => (typeof id === 'string' && id !== '' ? id : null)) : [];
  const duplicates = Number(detail);
  return { ok: true, written: list.length - duplicates, duplicates, ids: list };
}

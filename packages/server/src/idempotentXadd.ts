import { createHash } from 'node:crypto';
import { LIVE_PUBLISH_LUA, livePublishArgs } from '@streamgate/redis';
import type { RedisClient } from '@streamgate/redis';
import { z } from 'zod';

/*
 * The whole idempotent write in one script, so no crash, failover or concurrent retry can
 * separate the entry from the record that says it was written. The record is read first and the
 * XADD is the first write: if anything fails, nothing was written. Redis keeps a running script
 * writing once it has started, so the record always follows its entry. Right after the XADD the
 * entry is published on the stream's live channel with the id before it (LIVE_PUBLISH_LUA), so
 * relays deliver it without reading the stream.
 * KEYS: stream, record.  ARGV: MAXLEN (approximate), window in ms, entry data (JSON text),
 * live channel ('' for none), PUBLISH or SPUBLISH.
 * Reply: {'written', id} or {'duplicate', id of the entry the key wrote first}.
 */
export const IDEMPOTENT_XADD_SCRIPT = `${LIVE_PUBLISH_LUA}
local seen = redis.call('GET', KEYS[2])
if seen then return {'duplicate', seen} end
local prev = live_prev(KEYS[1])
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'data', ARGV[3])
live_publish(ARGV[4], ARGV[5], prev, id, ARGV[3])
redis.call('SET', KEYS[2], id, 'PX', ARGV[2])
return {'written', id}
`;

export const IDEMPOTENT_XADD_SHA = createHash('sha1').update(IDEMPOTENT_XADD_SCRIPT).digest('hex');

const replySchema = z.tuple([z.enum(['written', 'duplicate']), z.string().min(1)]);

export type IdempotentXaddRequest = {
  stream: string;
  record: string;
  maxLen: number;
  windowMs: number;
  data: string;
};

export type IdempotentXaddReply = { ok: true; id: string; duplicate: boolean } | { ok: false; reply: unknown };

// A RESP error starts with its code; NOSCRIPT means the server ran nothing.
export const isNoScript = (error: unknown): boolean =>
  error instanceof Error && error.name === 'ReplyError' && error.message.startsWith('NOSCRIPT');

/** The script's KEYS count and arguments, in EVAL/EVALSHA order after the script, for a write through `redis`. */
export function idempotentXaddArgs(
  redis: RedisClient,
  request: IdempotentXaddRequest,
): [2, string, string, number, number, string, string, string] {
  return [2, request.stream, request.record, request.maxLen, request.windowMs, request.data, ...livePublishArgs(redis, request.stream)];
}

/** Reads the script's reply; anything but the two documented shapes is `ok: false`. */
export function parseIdempotentXaddReply(reply: unknown): IdempotentXaddReply {
  const parsed = replySchema.safeParse(reply);
  if (!parsed.success) return { ok: false, reply };
  const [status, id] = parsed.data;
  return { ok: true, id, duplicate: status === 'duplicate' };
}

/**
 * Runs the script by its digest and sends the text only when the server does not know it (first
 * use, or after a restart emptied its script cache). Rejects as ioredis does on a failed command.
 * On a Cluster both keys are in one slot (the record key carries the stream's hash tag), so the
 * script runs on the stream's node.
 */
export async function idempotentXadd(redis: RedisClient, request: IdempotentXaddRequest): Promise<IdempotentXaddReply> {
  const args = idempotentXaddArgs(redis, request);
  let reply: unknown;
  try {
    reply = await redis.evalsha(IDEMPOTENT_XADD_SHA, ...args);
  } catch (error) {
    if (!isNoScript(error)) throw error;
    reply = await redis.eval(IDEMPOTENT_XADD_SCRIPT, ...args);
  }
  return parseIdempotentXaddReply(reply);
}

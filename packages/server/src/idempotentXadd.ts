import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { z } from 'zod';

/*
 * The whole idempotent write in one script, so no crash, failover or concurrent retry can
 * separate the entry from the record that says it was written. The record is read first and the
 * XADD is the first write: if anything fails, nothing was written. Redis keeps a running script
 * writing once it has started, so the record always follows its entry.
 * KEYS: stream, record.  ARGV: MAXLEN (approximate), window in ms, entry data (JSON text).
 * Reply: {'written', id} or {'duplicate', id of the entry the key wrote first}.
 */
export const IDEMPOTENT_XADD_SCRIPT = `
local seen = redis.call('GET', KEYS[2])
if seen then return {'duplicate', seen} end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'data', ARGV[3])
redis.call('SET', KEYS[2], id, 'PX', ARGV[2])
return {'written', id}
`;

const SCRIPT_SHA = createHash('sha1').update(IDEMPOTENT_XADD_SCRIPT).digest('hex');

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
const isNoScript = (error: unknown): boolean =>
  error instanceof Error && error.name === 'ReplyError' && error.message.startsWith('NOSCRIPT');

/**
 * Runs the script by its digest and sends the text only when the server does not know it (first
 * use, or after a restart emptied its script cache). Rejects as ioredis does on a failed command.
 */
export async function idempotentXadd(redis: Redis, request: IdempotentXaddRequest): Promise<IdempotentXaddReply> {
  const args = [request.stream, request.record, request.maxLen, request.windowMs, request.data] as const;
  let reply: unknown;
  try {
    reply = await redis.evalsha(SCRIPT_SHA, 2, ...args);
  } catch (error) {
    if (!isNoScript(error)) throw error;
    reply = await redis.eval(IDEMPOTENT_XADD_SCRIPT, 2, ...args);
  }
  const parsed = replySchema.safeParse(reply);
  if (!parsed.success) return { ok: false, reply };
  const [status, id] = parsed.data;
  return { ok: true, id, duplicate: status === 'duplicate' };
}

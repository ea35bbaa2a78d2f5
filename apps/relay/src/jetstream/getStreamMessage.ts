import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { z } from 'zod';

/** One stored message as STREAM.MSG.GET answers it. */
export interface StreamMessage {
  readonly seq: number;
  readonly subject: string;
  readonly data: Uint8Array;
}

/** By sequence, the subject's first at or after a sequence, or the subject's last. */
export type StreamMessageQuery = { seq: number } | { next_by_subj: string; seq: number } | { last_by_subj: string };

const reply = z.union([
  z.object({
    message: z.object({ subject: z.string(), seq: z.number().int().positive(), data: z.string().optional() }),
  }),
  z.object({ error: z.object({ code: z.number(), err_code: z.number(), description: z.string() }) }),
]);

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * STREAM.MSG.GET, asked of the stream's leader. Sent here rather than through
 * `jsm.streams.getMessage`, whose query type predates `next_by_subj` (server 2.9+, checked
 * against 2.9.10 by the tests). Null when no message matches; a missing stream rejects with the
 * client's JetStreamApiError (StreamNotFound), like every other JetStream call.
 */
export async function getStreamMessage(
  nc: NatsConnection,
  jetStream: string,
  query: StreamMessageQuery,
  timeoutMs: number,
): Promise<StreamMessage | null> {
  const msg = await nc.request(`$JS.API.STREAM.MSG.GET.${jetStream}`, encoder.encode(JSON.stringify(query)), { timeout: timeoutMs });
  const parsed = reply.parse(JSON.parse(decoder.decode(msg.data)));
  if ('error' in parsed) {
    if (parsed.error.err_code === JetStreamApiCodes.NoMessageFound) return null;
    throw new JetStreamApiError(parsed.error);
  }
  const { subject, seq, data } = parsed.message;
  return { subject, seq, data: Buffer.from(data ?? '', 'base64') };
}

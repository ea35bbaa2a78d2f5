import { z } from 'zod';
import { SERVER_KINDS } from './protocols.js';

/** Orchestrator → load worker. */
export const WorkerCommand = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('open'),
    kind: z.enum(SERVER_KINDS),
    port: z.number().int(),
    streams: z.array(z.string()),
    /** Relay tokens by stream index; empty for the peers. */
    tokens: z.array(z.string()),
    /** Stream indices of each client. */
    clients: z.array(z.array(z.number().int())),
    /** Track sequence gaps and the last id per client (single-stream clients only). */
    trackSeq: z.boolean(),
    /** Reconnect with full-jitter backoff when the server goes away (resuming on the relay). */
    reconnect: z.boolean(),
    timeoutMs: z.number(),
  }),
  /** Starts a measurement window: only events intended at or after `since` count. */
  z.object({ type: z.literal('reset'), since: z.number() }),
  z.object({ type: z.literal('stats'), histogram: z.boolean(), lastSeq: z.array(z.number()).optional() }),
  z.object({ type: z.literal('closeAll') }),
  /** The server was restarted on another port: clients reconnect there. */
  z.object({ type: z.literal('retarget'), port: z.number().int() }),
  z.object({ type: z.literal('exit') }),
]);
export type WorkerCommand = z.infer<typeof WorkerCommand>;

/** Load worker → orchestrator. */
export const WorkerReply = z.discriminatedUnion('type', [
  z.object({ type: z.literal('opened'), ready: z.number(), failed: z.number() }),
  z.object({ type: z.literal('ok') }),
  z.object({
    type: z.literal('stats'),
    received: z.number(),
    ready: z.number(),
    open: z.number(),
    errors: z.number(),
    gaps: z.number(),
    duplicates: z.number(),
    /** Compressed HDR histogram of latency in microseconds, when asked for. */
    histogram: z.string().nullable(),
    /** The same, from each entry's write (its stream id's time), for frames that carry an id; null without any. */
    fromWrite: z.string().nullable(),
    /** Times (ms since the epoch) at which clients became ready again after a reconnect. */
    backAt: z.array(z.number()),
  }),
]);
export type WorkerReply = z.infer<typeof WorkerReply>;
export type WorkerStats = Extract<WorkerReply, { type: 'stats' }>;

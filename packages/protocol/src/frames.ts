// zod/mini: its schemas tree-shake, so a browser bundle carries only the checks the frames use
// (the classic API cannot be split and would outweigh the whole client).
import * as z from 'zod/mini';
import { errorCodeSchema } from './errorCodes.js';
import { streamIdSchema } from './streamId.js';
import { streamNameSchema } from './streamName.js';

/** Version spoken on `/v1/ws`. */
export const PROTOCOL_VERSION = 1;

/** Client-chosen id of one subscription on one socket; it correlates every control frame. */
export const subscriptionIdSchema = z
  .string()
  .check(z.minLength(1), z.maxLength(64), z.regex(/^[A-Za-z0-9_.:-]+$/, 'may contain only letters, digits and _ . : -'));

const tokenSchema = z.string().check(z.minLength(1), z.maxLength(8192));

// ---- client → server ---------------------------------------------------------------------

export const subscribeFrameSchema = z.strictObject({
  op: z.literal('subscribe'),
  sid: subscriptionIdSchema,
  token: tokenSchema,
  /** Last id the client saw on this stream; omitted for a fresh subscription that starts live. */
  from: z.optional(streamIdSchema),
});

export const unsubscribeFrameSchema = z.strictObject({
  op: z.literal('unsubscribe'),
  sid: subscriptionIdSchema,
});

/** A fresh token for a live subscription, sent without reconnecting. */
export const refreshFrameSchema = z.strictObject({
  op: z.literal('refresh'),
  sid: subscriptionIdSchema,
  token: tokenSchema,
});

export const pingFrameSchema = z.strictObject({
  op: z.literal('ping'),
  t: z.optional(z.number()),
});

/** The answer to the relay's `ping`: proof, at the protocol level, that this client still reads. */
export const clientPongFrameSchema = z.strictObject({
  op: z.literal('pong'),
});

export const clientFrameSchema = z.discriminatedUnion('op', [
  subscribeFrameSchema,
  unsubscribeFrameSchema,
  refreshFrameSchema,
  pingFrameSchema,
  clientPongFrameSchema,
]);

export type SubscribeFrame = z.infer<typeof subscribeFrameSchema>;
export type UnsubscribeFrame = z.infer<typeof unsubscribeFrameSchema>;
export type RefreshFrame = z.infer<typeof refreshFrameSchema>;
export type PingFrame = z.infer<typeof pingFrameSchema>;
export type ClientPongFrame = z.infer<typeof clientPongFrameSchema>;
export type ClientFrame = z.infer<typeof clientFrameSchema>;
export const clientOps = ['subscribe', 'unsubscribe', 'refresh', 'ping', 'pong'] as const;

// ---- server → client ---------------------------------------------------------------------

export const welcomeFrameSchema = z.object({
  op: z.literal('welcome'),
  protocol: z.literal(PROTOCOL_VERSION),
  node: z.string(),
  limits: z.object({ maxFrameBytes: z.int(), maxSubscriptions: z.int() }),
  /**
   * Milliseconds between the relay's `ping` frames on this connection. A client that hears no
   * frame at all for this long plus its grace treats the socket as dead (docs/protocol.md §8).
   */
  pingIntervalMs: z.optional(z.int().check(z.positive())),
});

/**
 * How a resume went:
 * - `fresh`: no `from` was given; delivery starts with the next entry written.
 * - `recovered`: every entry after `from` follows, none missing.
 * - `truncated`: entries after `from` were trimmed away; delivery restarts at the oldest retained entry.
 * - `reset`: `from` does not belong to this stream (it was deleted and recreated, or never held
 *   that id); delivery restarts at the beginning of the current stream.
 */
export const recoverySchema = z.enum(['fresh', 'recovered', 'truncated', 'reset']);
export type Recovery = z.infer<typeof recoverySchema>;

export const subscribedFrameSchema = z.object({
  op: z.literal('subscribed'),
  sid: subscriptionIdSchema,
  stream: streamNameSchema,
  recovery: recoverySchema,
  /** The position delivery continues after: the client's new last id. */
  position: streamIdSchema,
  /** Token expiry, seconds since the epoch. */
  exp: z.int(),
});

/** Catch-up is over; what follows for this stream arrives live. */
export const liveFrameSchema = z.object({
  op: z.literal('live'),
  sid: subscriptionIdSchema,
  position: streamIdSchema,
});

/**
 * One stream entry. Keyed by stream, not subscription, so that one serialized frame serves every
 * subscriber of the stream on a pod (a socket holds at most one subscription per stream).
 */
export const eventFrameSchema = z.object({
  op: z.literal('event'),
  stream: streamNameSchema,
  id: streamIdSchema,
  data: z.unknown(),
});

/** An entry that is not in the entry format; its id still advances the client's position. */
export const malformedFrameSchema = z.object({
  op: z.literal('malformed'),
  stream: streamNameSchema,
  id: streamIdSchema,
  reason: z.string(),
});

/** A watched stream's key was deleted and recreated: every entry of the new incarnation follows. */
export const streamResetFrameSchema = z.object({
  op: z.literal('stream_reset'),
  stream: streamNameSchema,
  /** The position delivery continues after: the client's new last id for this stream. */
  position: streamIdSchema,
});

export const errorFrameSchema = z.object({
  op: z.literal('error'),
  sid: z.optional(subscriptionIdSchema),
  code: errorCodeSchema,
  retryable: z.boolean(),
  message: z.string(),
});

export const unsubscribedFrameSchema = z.object({
  op: z.literal('unsubscribed'),
  sid: subscriptionIdSchema,
  /** `client` when the client asked; otherwise the error code that ended the subscription. */
  reason: z.union([z.literal('client'), errorCodeSchema]),
});

/** The subscription's token expires soon: send a `refresh` frame with a new one. */
export const refreshTokenFrameSchema = z.object({
  op: z.literal('refresh_token'),
  sid: subscriptionIdSchema,
  exp: z.int(),
});

export const refreshedFrameSchema = z.object({
  op: z.literal('refreshed'),
  sid: subscriptionIdSchema,
  exp: z.int(),
});

/** Sent before a drain close: reconnect now and resume each subscription from these ids. */
export const reconnectFrameSchema = z.object({
  op: z.literal('reconnect'),
  reason: z.enum(['drain']),
  positions: z.array(z.object({ sid: subscriptionIdSchema, stream: streamNameSchema, id: streamIdSchema })),
  /** Milliseconds from the start of the pod's drain to this notice: lets clients observe the spread. */
  sinceDrainMs: z.optional(z.int().check(z.nonnegative())),
  /** When this notice was due on the drain's schedule, on the same clock: `sinceDrainMs - dueMs` is how late it went out. */
  dueMs: z.optional(z.int().check(z.nonnegative())),
});

export const pongFrameSchema = z.object({ op: z.literal('pong'), t: z.optional(z.number()) });

/** The relay's liveness check: answer with a client `pong`. */
export const serverPingFrameSchema = z.object({ op: z.literal('ping') });

export const serverFrameSchema = z.discriminatedUnion('op', [
  welcomeFrameSchema,
  subscribedFrameSchema,
  liveFrameSchema,
  eventFrameSchema,
  malformedFrameSchema,
  streamResetFrameSchema,
  errorFrameSchema,
  unsubscribedFrameSchema,
  refreshTokenFrameSchema,
  refreshedFrameSchema,
  reconnectFrameSchema,
  pongFrameSchema,
  serverPingFrameSchema,
]);

export type WelcomeFrame = z.infer<typeof welcomeFrameSchema>;
export type SubscribedFrame = z.infer<typeof subscribedFrameSchema>;
export type LiveFrame = z.infer<typeof liveFrameSchema>;
export type EventFrame = z.infer<typeof eventFrameSchema>;
export type MalformedFrame = z.infer<typeof malformedFrameSchema>;
export type StreamResetFrame = z.infer<typeof streamResetFrameSchema>;
export type ErrorFrame = z.infer<typeof errorFrameSchema>;
export type UnsubscribedFrame = z.infer<typeof unsubscribedFrameSchema>;
export type RefreshTokenFrame = z.infer<typeof refreshTokenFrameSchema>;
export type RefreshedFrame = z.infer<typeof refreshedFrameSchema>;
export type ReconnectFrame = z.infer<typeof reconnectFrameSchema>;
export type PongFrame = z.infer<typeof pongFrameSchema>;
export type ServerPingFrame = z.infer<typeof serverPingFrameSchema>;
export type ServerFrame = z.infer<typeof serverFrameSchema>;

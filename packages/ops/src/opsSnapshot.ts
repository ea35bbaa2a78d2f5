import { z } from 'zod';

/**
 * The operations stream: each relay pod, auth service and ingest worker XADDs one snapshot of
 * its state a second into it, and the dashboard reads it through the relay like any stream.
 * A snapshot is a whole picture, never a delta: a reader that missed some (a reconnect, a
 * trimmed stream) is right again with the next one. Nothing secret goes in: no token, no key
 * material, no Redis password (targets are shown as `host:port/db`).
 */
export const OPS_STREAM_DEFAULT = 'streamgate:ops';
export const OPS_SNAPSHOT_INTERVAL_MS = 1_000;
/** Serialized size bound of one snapshot; lists are cut (and `truncated` set) to stay under it. */
export const OPS_SNAPSHOT_MAX_BYTES = 16_384;
/** A pod with no snapshot for this long is shown as stale. */
export const OPS_STALE_AFTER_MS = 5_000;
/** Entries kept in the operations stream (`XADD … MAXLEN ~`): some minutes of a small fleet. */
export const OPS_STREAM_MAXLEN = 2_000;

const count = z.number().int().nonnegative();
/** The longest label a snapshot holds: a pod name, a target, a stream. */
export const OPS_LABEL_MAX = 120;
const label = z.string().min(1).max(OPS_LABEL_MAX);

/**
 * The boot check for the variable that names a pod in its snapshots: a longer name would boot,
 * then fail every snapshot as invalid_snapshot.
 */
export const podNameCheck = (text: string): string | null =>
  text.length <= OPS_LABEL_MAX
    ? null
    : `must be at most ${OPS_LABEL_MAX} characters (it names the pod in operations snapshots, docs/protocol.md §15); got ${text.length}`;

const snapshotBase = {
  v: z.literal(1),
  /** The pod's name (hostname in Kubernetes, the service name locally): unique in the fleet. */
  pod: label,
  /** When the snapshot was taken, ms since the epoch. */
  at: z.number().nonnegative(),
  /** When the process started, ms since the epoch: a restart shows as a new startedAt. */
  startedAt: z.number().nonnegative(),
  /** 0, 1, 2 … per process: a reader sees skipped snapshots. */
  seq: count,
  /** Lists were cut to fit OPS_SNAPSHOT_MAX_BYTES. */
  truncated: z.boolean(),
};

export const relayReadModeSchema = z.object({
  /** `host:port/db`, never the password. */
  target: label,
  mode: z.enum(['notify', 'batch', 'pending']),
});

export const relayDrainOutcomeSchema = z.enum(['drained', 'deadline']);

export const relayDrainSchema = z.object({
  /** When SIGTERM started the drain, ms since the epoch. */
  startedAt: z.number().nonnegative(),
  /** Each connection gets its reconnect notice at a uniform random time in [0, windowMs). */
  windowMs: z.number().positive(),
  /** Open connections when the drain started: the schedule is connectionsAtStart × (1 − t / windowMs). */
  connectionsAtStart: count,
  /**
   * null while the drain runs. Set in the relay's last snapshot, written as the drain ends and the
   * process exits: `drained` (every connection left) or `deadline` (the deadline closed the rest).
   * Absent (a relay from before this field) reads as null.
   */
  outcome: relayDrainOutcomeSchema.nullable().default(null),
});

export const relaySnapshotSchema = z.object({
  kind: z.literal('relay'),
  ...snapshotBase,
  ready: z.boolean(),
  connections: count,
  subscriptions: count,
  streamsWatched: count,
  deliveriesTotal: count,
  /** Over the last interval. */
  deliveriesPerSecond: z.number().nonnegative(),
  /** Cumulative refusals by reason: token refusal reasons, limit breaches, error frame codes. */
  refusals: z.record(z.string().max(64), count),
  readModes: z.array(relayReadModeSchema).max(32),
  /** null unless draining. */
  drain: relayDrainSchema.nullable(),
  /**
   * Revocation records in force on the pod (each expires a token lifetime after it was made) and
   * subscriptions ended by one since start. Absent from relays older than revocation.
   */
  revocations: z.object({ held: count, ended: count }).optional(),
});

export const authSnapshotSchema = z.object({
  kind: z.literal('auth'),
  ...snapshotBase,
  ready: z.boolean(),
  tokensIssuedTotal: count,
  tokensPerSecond: z.number().nonnegative(),
  /** Cumulative refused token requests by tRPC error code. */
  refusals: z.record(z.string().max(64), count),
  /** Key ids (`kid`) of the signing keys in the JWKS: names only. */
  signingKeyIds: z.array(label).max(16),
});

export const ingestStreamStateSchema = z.enum(['connecting', 'active', 'backfilling', 'switching', 'degraded']);

export const ingestChainStreamSchema = z.object({
  stream: z.string().min(1).max(200),
  chain: label,
  state: ingestStreamStateSchema,
  /** The provider the stream is subscribed on now (its configured name), null while none is. */
  provider: label.nullable(),
  /** The WebSocket provider the stream prefers (lowest priority) and fails back to; null if none has a wsUrl. */
  preferredProvider: label.nullable(),
  /** Whether the live subscription is on the preferred provider (false while none is live). */
  onPreferred: z.boolean(),
  /** Highest block the worker knows the chain has. */
  head: count.nullable(),
  /** Highest block written into the stream. */
  lastWritten: count.nullable(),
  failovers: count,
  gaps: count,
  reorgs: count,
});

export const ingestVenueSessionSchema = z.object({
  id: label,
  /** Symbols this session is subscribed to. */
  symbols: count,
  connected: z.boolean(),
});

export const ingestVenueSchema = z.object({
  venue: label,
  sessions: z.array(ingestVenueSessionSchema).max(64),
  /** Symbols wanted (demand) and covered, by kind (trades, book, …). */
  wanted: count,
  coverage: z.record(z.string().max(64), count),
});

export const ingestSnapshotSchema = z.object({
  kind: z.literal('ingest'),
  ...snapshotBase,
  /** Stream leases this worker holds. */
  leasesHeld: count,
  chains: z.array(ingestChainStreamSchema).max(64),
  venues: z.array(ingestVenueSchema).max(16),
});

export const opsSnapshotSchema = z.discriminatedUnion('kind', [relaySnapshotSchema, authSnapshotSchema, ingestSnapshotSchema]);

export type RelaySnapshot = z.infer<typeof relaySnapshotSchema>;
export type RelayDrainOutcome = z.infer<typeof relayDrainOutcomeSchema>;
export type AuthSnapshot = z.infer<typeof authSnapshotSchema>;
export type IngestSnapshot = z.infer<typeof ingestSnapshotSchema>;
export type IngestChainStream = z.infer<typeof ingestChainStreamSchema>;
export type IngestVenue = z.infer<typeof ingestVenueSchema>;
export type OpsSnapshot = z.infer<typeof opsSnapshotSchema>;

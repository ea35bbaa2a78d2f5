import type { CoreLog } from '@streamgate/ingest-core';
import type { VenueNotice } from './VenueNotice.js';
import type { VenueKind, VenuePayload } from './venueSchemas.js';
import type { AttemptKind, ShardSession } from './VenueShard.js';
import type { VenueSessionOptions } from './VenueSession.js';
import type { VenueHttpClient } from './VenueHttpClient.js';
import type { SessionBudget } from './SessionBudget.js';

export interface VenueFeedEvents {
  attempt?(kind: AttemptKind, outcome: string): void;
  reassertSkipped?(shard: number): void;
  staleAnswer?(): void;
  payload?(kind: VenueKind, wanted: boolean): void;
  garbage?(why: string): void;
}

export interface VenueFeedOptions {
  readonly venue: string;
  readonly mqttUrl: string;
  readonly appKey: string;
  readonly http: VenueHttpClient;
  /** Kinds asked of the venue (sub_types). */
  readonly kinds: readonly VenueKind[];
  /** Kinds counted in coverage: only those the venue was seen to publish. Default: `kinds`. */
  readonly declaredKinds?: readonly VenueKind[];
  /** The venue's stated per-session ceiling; lowered when the venue answers TOO_MANY_SYMBOLS. */
  readonly maxSymbolsPerSession: number;
  /** Sessions one app key may hold: the hard ceiling no caller can push past. */
  readonly maxSessions: number;
  /**
   * The key's sessions, shared with every other feed on the same endpoint and key; this feed
   * opens one only while it has room. Default: a budget of `maxSessions` for this feed alone.
   */
  readonly sessions?: SessionBudget;
  readonly reassertIntervalMs: number;
  readonly reconcileTimeoutMs: number;
  /** The caller's own timeout; every call is answered by two thirds of it. */
  readonly callTimeoutMs: number;
  readonly rejectedSymbolTtlMs: number;
  readonly coverageStaleMs: number;
  readonly connectTimeoutMs: number;
  readonly log: CoreLog;
  readonly onNotice?: (notice: VenueNotice) => void;
  readonly onPayload?: (payload: VenuePayload) => void;
  readonly events?: VenueFeedEvents;
  readonly now?: () => number;
  /** Opens an MQTT session; VenueSession unless a test hands in a fake. */
  readonly openSession?: (options: VenueSessionOptions) => ShardSession;
}

import type { RelayError, StreamId, StreamName } from '@streamgate/protocol';
import type { Connection } from './Connection.js';

/**
 * One subscription as the fan-out core tracks it.
 * - `pending`: waiting for the stream's channel and the resume decision;
 * - `catching-up`: reading history through the stream's shared catch-up group;
 * - `waiting`: its position is ahead of this pod's live cursor (it came from a faster pod);
 *   it joins the topic just before the first entry after its position is published;
 * - `live`: on the stream's topic, receiving every publish;
 * - `gone`: removed; any late completion is ignored.
 */
export type SubscriberPhase = 'pending' | 'catching-up' | 'waiting' | 'live' | 'gone';

export type StartResult = { ok: true } | { ok: false; error: RelayError };

export interface HubSubscriber {
  readonly conn: Connection;
  readonly sid: string;
  readonly stream: StreamName;
  /** Last id this subscriber has been sent (for live subscribers, see StreamHub.positionOf). */
  position: StreamId;
  phase: SubscriberPhase;
  /**
   * A position the client was already told is past a gap (the `from` of a `truncated` or `reset`
   * answer): catch-up does not report that same gap again.
   */
  acknowledgedGap: StreamId | null;
  exp: number;
  /** Set while catch-up holds back pages because its socket is still sending earlier ones. */
  catchUpPaused: boolean;
  /** Settles once the subscriber is catching up, waiting or live, or has failed. */
  readonly started: Promise<StartResult>;
  /**
   * Called when the hub ends a subscriber after it started (a catch-up read failed, history was
   * trimmed under it, the key stopped being a stream). The hub has already removed it.
   */
  readonly onEnded: (error: RelayError) => void;
}

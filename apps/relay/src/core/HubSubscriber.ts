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

const settled = (): void => undefined;

/**
 * A subscriber's phase only moves forward (pending → catching-up | waiting → live → gone, any
 * phase → gone), and its position only while it is placed and not yet live: a live subscriber's
 * position is the channel's cursor, which the channel tracks.
 */
export class HubSubscriber {
  private currentPhase: SubscriberPhase = 'pending';
  private sentUpTo: StreamId;
  private gap: StreamId | null = null;
  private expiry: number;
  private paused = false;
  private settleStart: (result: StartResult) => void = () => undefined;
  /** Settles once the subscriber is catching up, waiting or live, or has failed. */
  readonly started: Promise<StartResult>;

  constructor(
    readonly conn: Connection,
    readonly sid: string,
    readonly stream: StreamName,
    from: StreamId,
    exp: number,
    /**
     * Called when the hub ends a subscriber after it started (a catch-up read failed, history was
     * trimmed under it, the key stopped being a stream). The hub has already removed it. It is
     * handed the subscriber, so one function can serve every subscription of a socket.
     */
    readonly onEnded: (error: RelayError, sub: HubSubscriber) => void,
  ) {
    this.sentUpTo = from;
    this.expiry = exp;
    this.started = new Promise<StartResult>((resolve) => (this.settleStart = resolve));
  }

  get phase(): SubscriberPhase {
    return this.currentPhase;
  }

  /** Last id this subscriber has been sent (for live subscribers, see StreamHub.positionOf). */
  get position(): StreamId {
    return this.sentUpTo;
  }

  /**
   * A position the client was already told is past a gap (the `from` of a `truncated` or `reset`
   * answer): catch-up does not report that same gap again.
   */
  get acknowledgedGap(): StreamId | null {
    return this.gap;
  }

  /** The token's expiry, seconds since the epoch. */
  get exp(): number {
    return this.expiry;
  }

  get gone(): boolean {
    return this.currentPhase === 'gone';
  }

  /** A refreshed token is in effect. */
  renewExpiry(exp: number): void {
    this.expiry = exp;
  }

  /** Ends the start: the first result wins, later ones are ignored. */
  settle(result: StartResult): void {
    const settle = this.settleStart;
    // The resolver (and the promise's context it holds) is not kept for the subscription's life.
    this.settleStart = settled;
    settle(result);
  }

  /** The resume decision: the client holds everything up to `after`, told of a gap there or not. */
  decide(after: StreamId, gapAcknowledged: boolean): void {
    if (this.currentPhase !== 'pending') return;
    this.sentUpTo = after;
    this.gap = gapAcknowledged ? after : null;
  }

  startCatchUp(): void {
    if (this.currentPhase === 'pending') this.currentPhase = 'catching-up';
  }

  startWaiting(): void {
    if (this.currentPhase === 'pending') this.currentPhase = 'waiting';
  }

  /** Returns whether it went live now (false when it already was, or is gone). */
  markLive(): boolean {
    if (this.currentPhase === 'live' || this.currentPhase === 'gone') return false;
    this.currentPhase = 'live';
    this.paused = false;
    return true;
  }

  /** Catch-up sent it the entry `id`, the next after its position. */
  advance(id: StreamId): void {
    if (this.currentPhase === 'catching-up') this.sentUpTo = id;
  }

  /**
   * The stream was recreated before this placed subscriber went live: it holds nothing of the
   * new incarnation, whose entries all follow `position`.
   */
  restartAt(position: StreamId): void {
    if (this.currentPhase !== 'catching-up' && this.currentPhase !== 'waiting') return;
    this.sentUpTo = position;
    this.gap = null;
    this.paused = false;
  }

  /** Returns true when it was not paused already (the pause is worth counting). */
  pauseCatchUp(): boolean {
    if (this.paused || this.currentPhase !== 'catching-up') return false;
    this.paused = true;
    return true;
  }

  resumeCatchUp(): void {
    this.paused = false;
  }

  /** Returns the phase it left. */
  markGone(): SubscriberPhase {
    const was = this.currentPhase;
    this.currentPhase = 'gone';
    return was;
  }
}

import type { RelayClaims, RevocationRecord, StreamId } from '@streamgate/protocol';
import type { HubSubscriber } from './core/HubSubscriber.js';
import type { StreamHub } from './core/StreamHub.js';
import { RevocationList } from './revocation/RevocationList.js';
import type { TokenTimers } from './TokenTimers.js';

/** A subscribe whose token is still being checked: it holds its sid, so a second subscribe with it is refused. */
export interface PendingSubscription {
  readonly state: 'authorizing';
  readonly sid: string;
  /** Settles once the check is done and the sid holds what it made (an active subscription, or nothing). */
  readonly checked: Promise<void>;
}

/** An entry of a session's subscriptions, keyed by sid. */
export type SessionSubscription = PendingSubscription | ActiveSubscription;

/**
 * One established subscription of a socket: what its token granted, where it reads, and the
 * timers of the token in force. The session owns the map of them and says when each starts,
 * renews and ends; the record keeps the token's `iat` to itself.
 */
export class ActiveSubscription {
  readonly state = 'active';
  readonly subject: string;
  readonly stream: string;
  readonly target: string;
  /** `iat` of the token in force: a revocation ends the subscription only if it covers this token. */
  private iat: number;

  constructor(
    readonly sid: string,
    claims: RelayClaims,
    private readonly hub: StreamHub,
    private readonly hubSub: HubSubscriber,
    private readonly timers: TokenTimers,
  ) {
    this.subject = claims.sub;
    this.stream = claims.stream;
    this.iat = claims.iat;
    this.target = internTarget(claims.redis);
  }

  /** Whether `hubSub` is this subscription's reader, not one of an earlier subscription with the same sid. */
  reads(hubSub: HubSubscriber): boolean {
    return this.hubSub === hubSub;
  }

  /** Asks for a new token within its refresh window; ends the subscription once it ran out. */
  armTimers(claims: RelayClaims): void {
    this.timers.schedule(claims);
  }

  /** A refreshed token (same subject, stream and target) takes over. */
  renew(claims: RelayClaims): void {
    this.iat = claims.iat;
    this.hubSub.renewExpiry(claims.exp);
    this.armTimers(claims);
  }

  /**
   * Whether the client has had its `subscribed` (the hub placed it): only then is position() a
   * place to resume from; before it, position() is the requested `from`, or the stream's start.
   */
  get established(): boolean {
    const phase = this.hubSub.phase;
    return phase !== 'pending' && phase !== 'gone';
  }

  /** The expiry of the token in force, seconds since the epoch. */
  get exp(): number {
    return this.hubSub.exp;
  }

  /** The hub's start of this subscription: its first read, then `subscribed`, or the reason it failed. */
  get started(): HubSubscriber['started'] {
    return this.hubSub.started;
  }

  /** Last position delivered, where the client resumes. */
  position(): StreamId {
    return this.hub.positionOf(this.hubSub);
  }

  coveredBy(record: RevocationRecord): boolean {
    return RevocationList.matches(record, { sub: this.subject, stream: this.stream, iat: this.iat });
  }

  /** Stops the timers and leaves the hub; the record is done after this. */
  release(): void {
    this.timers.cancel();
    this.hub.unsubscribe(this.hubSub);
  }
}

/**
 * One string per Redis target for every subscription on it. Each verified token decodes a fresh
 * copy of its `redis` claim, which an idle subscription would otherwise hold for its life; the
 * verifier passes only allowlisted targets, so this holds at most the allowlist.
 */
const internedTargets = new Map<string, string>();

function internTarget(target: string): string {
  const known = internedTargets.get(target);
  if (known !== undefined) return known;
  internedTargets.set(target, target);
  return target;
}

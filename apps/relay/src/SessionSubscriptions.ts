import { relayError } from '@streamgate/protocol';
import type { RefreshFrame, RelayError, RevocationRecord, StreamId, SubscribeFrame } from '@streamgate/protocol';
import type { Logger } from 'pino';
import { ActiveSubscription } from './ActiveSubscription.js';
import type { SessionSubscription } from './ActiveSubscription.js';
import type { Connection } from './core/Connection.js';
import type { HubSubscriber } from './core/HubSubscriber.js';
import { errorFrameText, refreshTokenFrameText, refreshedFrameText, unsubscribedFrameText } from './core/serverFrames.js';
import type { StreamHub } from './core/StreamHub.js';
import { refreshVerdict } from './refreshVerdict.js';
import type { RelayMetrics } from './RelayMetrics.js';
import type { Verifier } from './revocation/RevokingVerifier.js';
import { TokenTimers } from './TokenTimers.js';
import type { TokenEvents, TokenTimersOptions } from './TokenTimers.js';

/** What a socket's subscriptions need of the pod. */
export interface SubscriptionDeps {
  readonly verifier: Verifier;
  readonly hubFor: (target: string) => StreamHub;
  readonly maxSubscriptions: number;
  readonly metrics: RelayMetrics;
  readonly log: Logger;
}

/**
 * The subscriptions of one socket, each with its own token: subscribe, refresh, unsubscribe and
 * every way one ends (token expired, revoked, ended by the hub, socket closed). Session extends it
 * to add the socket itself (frames in, liveness, drain), so that a socket is still one object: an
 * idle socket holds one header and one copy of `conn` and `deps`, not two.
 */
export class SessionSubscriptions<D extends SubscriptionDeps = SubscriptionDeps> implements TokenEvents {
  private readonly subs = new Map<string, SessionSubscription>();
  private closed = false;
  /**
   * What the hub calls when it ends one of this socket's subscriptions: one function for all of
   * them (each subscription holding a closure of its own would cost every idle socket).
   */
  private readonly hubEnded: (error: RelayError, hubSub: HubSubscriber) => void;

  constructor(
    protected readonly conn: Connection,
    protected readonly deps: D,
    private readonly timerOptions: TokenTimersOptions,
  ) {
    // Assigned here, not as a class field: a field's arrow gets a `name` property defined on it
    // by transpilers that keep names (tsx), which turns each copy into a dictionary-mode object.
    this.hubEnded = (error, hubSub) => {
      const current = this.subs.get(hubSub.sid);
      if (current?.state === 'active' && current.reads(hubSub)) this.endedByHub(current, error);
    };
  }

  /**
   * Last position of every established subscription, for a drain notice. One still waiting for its
   * first read has none to give: the client resumes it from its own, as for one still authorizing.
   */
  positions(): Array<{ sid: string; stream: string; id: StreamId }> {
    const out: Array<{ sid: string; stream: string; id: StreamId }> = [];
    for (const sub of this.subs.values()) {
      if (sub.state === 'active' && sub.established) out.push({ sid: sub.sid, stream: sub.stream, id: sub.position() });
    }
    return out;
  }

  /** Ends, with `unsubscribed` `revoked`, every subscription whose token `record` covers; returns how many. */
  revoke(record: RevocationRecord): number {
    let ended = 0;
    for (const sub of [...this.subs.values()]) {
      if (sub.state !== 'active' || !sub.coveredBy(record)) continue;
      this.unsubscribe(sub.sid, 'revoked');
      ended += 1;
    }
    return ended;
  }

  /** For the token timers of subscription `sid`: time to ask for a new token. */
  refreshDue(sid: string, exp: number): void {
    const sub = this.subs.get(sid);
    if (sub?.state === 'active' && !sub.established) {
      // A token already inside its refresh window when it arrived: its `refresh_token` follows the
      // `subscribed` (docs/protocol.md §5), unless the subscription failed or was renewed meanwhile.
      void sub.started.then((started) => {
        if (started.ok && this.subs.get(sid) === sub && sub.exp === exp && this.writable()) this.send(refreshTokenFrameText(sid, exp));
      });
      return;
    }
    this.send(refreshTokenFrameText(sid, exp));
  }

  /** For the token timers of subscription `sid`: its token ran out. */
  expired(sid: string): void {
    this.deps.metrics.refreshes.inc({ outcome: 'expired' });
    this.unsubscribe(sid, 'token_expired');
  }

  /** Whether frames may still be written: neither this side nor the socket has closed. */
  protected writable(): boolean {
    return !this.closed && !this.conn.closed;
  }

  /** The socket is gone: from now on nothing is written and no token check resumes. False if it already was. */
  protected markClosed(): boolean {
    if (this.closed) return false;
    this.closed = true;
    return true;
  }

  /** Releases every subscription without writing to the socket. */
  protected releaseAll(): void {
    for (const sub of this.subs.values()) this.release(sub);
    this.subs.clear();
  }

  protected reject(error: RelayError, sid?: string): void {
    this.deps.metrics.frameError(error.code);
    this.send(errorFrameText(error.code, error.retryable, error.message, sid));
  }

  protected send(text: string): void {
    if (this.writable()) this.conn.send(text);
  }

  protected async subscribe(frame: SubscribeFrame): Promise<void> {
    const { sid } = frame;
    if (this.subs.has(sid))
      return this.reject(relayError('duplicate_subscription', `subscription ${sid} already exists on this socket`), sid);
    if (this.subs.size >= this.deps.maxSubscriptions) {
      this.deps.metrics.limitBreach('subscriptions');
      return this.reject(relayError('too_many_subscriptions', `at most ${this.deps.maxSubscriptions} subscriptions per socket`), sid);
    }
    let checked = (): void => undefined;
    const pending: SessionSubscription = { state: 'authorizing', sid, checked: new Promise((resolve) => (checked = resolve)) };
    this.subs.set(sid, pending);
    let active: ActiveSubscription | undefined;
    try {
      active = await this.authorize(frame, pending);
    } finally {
      checked();
    }
    if (active === undefined) return;
    const started = await active.started;
    if (!started.ok && this.subs.get(sid) === active) {
      this.drop(active);
      if (started.error.code !== 'unknown_subscription') this.reject(started.error, sid);
    }
  }

  /** The subscribe's token check and, if it passes, its subscription; undefined when there is none (refused, or dropped meanwhile). */
  private async authorize(frame: SubscribeFrame, pending: SessionSubscription): Promise<ActiveSubscription | undefined> {
    const { sid } = frame;
    const verified = await this.deps.verifier.verify(frame.token);
    // The socket closed or the client unsubscribed while the token was checked.
    if (this.closed || this.subs.get(sid) !== pending) return undefined;
    if (!verified.ok) {
      this.subs.delete(sid);
      this.deps.metrics.authFailures.inc({ reason: verified.error.code });
      this.reject(verified.error, sid);
      return undefined;
    }
    const claims = verified.claims;
    if (this.holdsStream(claims.stream)) {
      this.subs.delete(sid);
      this.reject(relayError('duplicate_stream', `this socket already subscribes to ${claims.stream}`), sid);
      return undefined;
    }
    const hub = this.deps.hubFor(claims.redis);
    const hubSub: HubSubscriber = hub.subscribe(this.conn, sid, claims.stream, frame.from, claims.exp, this.hubEnded);
    const active = new ActiveSubscription(sid, claims, hub, hubSub, new TokenTimers(this.timerOptions, sid, this));
    this.subs.set(sid, active);
    this.deps.metrics.subscriptions.inc();
    active.armTimers(claims);
    return active;
  }

  protected unsubscribe(sid: string, reason: 'client' | RelayError['code']): void {
    const sub = this.subs.get(sid);
    if (sub === undefined) {
      if (reason === 'client') this.reject(relayError('unknown_subscription', `no subscription ${sid} on this socket`), sid);
      return;
    }
    this.drop(sub);
    this.send(unsubscribedFrameText(sid, reason));
  }

  protected async refresh(frame: RefreshFrame): Promise<void> {
    let sub = this.subs.get(frame.sid);
    // A refresh sent right behind its subscribe (a client refreshing on its own schedule) waits for
    // the subscribe's check: answering it unknown_subscription would leave the client's token to run out.
    if (sub?.state === 'authorizing') {
      await sub.checked;
      if (this.closed) return;
      sub = this.subs.get(frame.sid);
    }
    if (sub?.state === 'active') {
      // Its answer never comes before the subscription's `subscribed`: a client would read a
      // refresh's `error` or `refreshed` for a sid it has not heard of yet as the subscribe's own.
      await sub.started;
      if (this.closed) return;
      if (this.subs.get(frame.sid) !== sub) sub = undefined;
    }
    if (sub === undefined || sub.state !== 'active') {
      return this.reject(relayError('unknown_subscription', `no active subscription ${frame.sid} to refresh`), frame.sid);
    }
    const verified = await this.deps.verifier.verify(frame.token);
    if (this.closed || this.subs.get(frame.sid) !== sub) return;
    const verdict = refreshVerdict(sub, verified);
    this.deps.metrics.refreshes.inc({ outcome: verdict.outcome });
    switch (verdict.outcome) {
      case 'moved':
        // The client subscribes again with the token it just sent.
        return this.unsubscribe(sub.sid, 'stream_moved');
      case 'refused':
        this.deps.metrics.authFailures.inc({ reason: verdict.error.code });
        return this.reject(verdict.error, frame.sid);
      case 'ok':
        sub.renew(verdict.claims);
        this.send(refreshedFrameText(sub.sid, verdict.claims.exp));
    }
  }

  /** The hub ended an established subscription; the client hears `unsubscribed` with the reason. */
  private endedByHub(sub: SessionSubscription, error: RelayError): void {
    this.deps.log.debug({ sid: sub.sid, code: error.code, message: error.message }, 'subscription ended by the hub');
    this.drop(sub);
    this.send(unsubscribedFrameText(sub.sid, error.code));
  }

  /**
   * Whether a subscription (active) already reads `stream`. A scan of at most maxSubscriptions
   * entries, once per subscribe, instead of a second per-socket set that every idle socket holds.
   */
  private holdsStream(stream: string): boolean {
    for (const sub of this.subs.values()) if (sub.state === 'active' && sub.stream === stream) return true;
    return false;
  }

  private drop(sub: SessionSubscription): void {
    this.subs.delete(sub.sid);
    this.release(sub);
  }

  private release(sub: SessionSubscription): void {
    if (sub.state !== 'active') return;
    sub.release();
    this.deps.metrics.subscriptions.dec();
  }
}

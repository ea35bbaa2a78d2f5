import { CloseCode, relayError } from '@streamgate/protocol';
import type { ClientFrame, RefreshFrame, RelayError, StreamId, SubscribeFrame } from '@streamgate/protocol';
import type { Logger } from 'pino';
import type { Connection } from './core/Connection.js';
import { PING_FRAME_TEXT } from './core/serverFrames.js';
import type { LivenessMember, LivenessSweep, LivenessTarget } from './liveness/LivenessSweep.js';
import type { HubSubscriber } from './core/HubSubscriber.js';
import type { StreamHub } from './core/StreamHub.js';
import { ActiveSubscription } from './ActiveSubscription.js';
import type { SessionSubscription } from './ActiveSubscription.js';
import { readClientFrame } from './readClientFrame.js';
import { refreshVerdict } from './refreshVerdict.js';
import {
  errorFrameText,
  pongEchoFrameText,
  pongFrameText,
  reconnectFrameText,
  refreshTokenFrameText,
  refreshedFrameText,
  unsubscribedFrameText,
  welcomeFrameText,
} from './core/serverFrames.js';
import type { Verifier } from './revocation/RevokingVerifier.js';
import type { RevocationRecord } from '@streamgate/protocol';
import type { RelayMetrics } from './RelayMetrics.js';
import { systemClock } from './Clock.js';
import { ProtocolViolationGuard } from './limits/ProtocolViolationGuard.js';
import { rawNumberMember } from './rawNumberMember.js';
import { DeadlineQueue } from './DeadlineQueue.js';
import { TokenTimers } from './TokenTimers.js';
import type { TokenEvents, TokenTimersOptions } from './TokenTimers.js';
import type { Clock } from './Clock.js';

export interface SessionDeps {
  readonly verifier: Verifier;
  readonly hubFor: (target: string) => StreamHub;
  readonly nodeId: string;
  readonly maxFrameBytes: number;
  readonly maxSubscriptions: number;
  readonly refreshLeadSeconds: number;
  /** Tolerance on `exp` / `nbf` between the issuer's clock and this relay's (RELAY_CLOCK_SKEW_SECONDS). */
  readonly clockSkewSeconds: number;
  readonly metrics: RelayMetrics;
  readonly log: Logger;
  /** Wall clock and timers for token refresh and expiry; the system clock unless a test injects one. */
  readonly clock?: Clock;
  /** Uniform in [0, 1): where in its refresh window each token's `refresh_token` falls. */
  readonly random?: () => number;
  /**
   * Called once when the socket is gone, after the session released its subscriptions: what
   * the pod keeps per socket (admission, guards) is let go there. One function for every session.
   */
  readonly onClosed?: (session: Session, conn: Connection) => void;
  /** Announced in `welcome`: how often the relay pings this socket (LivenessSweep). */
  readonly pingIntervalMs?: number;
  /** The pod's one sweep: the session joins it on open and leaves it on close. */
  readonly liveness?: LivenessSweep;
}

/**
 * One client socket's protocol state: its subscriptions, each with its own token. It speaks
 * frames over a Connection and knows nothing of uWS. Every bad input is answered with a typed
 * error frame and leaves the session serving.
 */
export class Session implements TokenEvents, LivenessTarget {
  private alive: LivenessMember | null = null;
  private readonly subs = new Map<string, SessionSubscription>();
  private closed = false;
  /** Made on the first unusable frame: most sockets never send one, and an idle one should not hold it. */
  private violations: ProtocolViolationGuard | null = null;
  private readonly timerOptions: TokenTimersOptions;
  /**
   * What the hub calls when it ends one of this socket's subscriptions: one function for all of
   * them (each subscription holding a closure of its own would cost every idle socket).
   */
  private readonly hubEnded: (error: RelayError, hubSub: HubSubscriber) => void;

  constructor(
    private readonly conn: Connection,
    private readonly deps: SessionDeps,
  ) {
    this.timerOptions = timerOptionsOf(deps);
    // Assigned here, not as a class field: a field's arrow gets a `name` property defined on it
    // by transpilers that keep names (tsx), which turns each copy into a dictionary-mode object.
    this.hubEnded = (error, hubSub) => {
      const current = this.subs.get(hubSub.sid);
      if (current?.state === 'active' && current.reads(hubSub)) this.endedByHub(current, error);
    };
  }

  open(): void {
    this.deps.metrics.connections.inc();
    this.conn.send(
      welcomeFrameText(
        this.deps.nodeId,
        { maxFrameBytes: this.deps.maxFrameBytes, maxSubscriptions: this.deps.maxSubscriptions },
        this.deps.pingIntervalMs,
      ),
    );
    this.alive = this.deps.liveness?.add(this) ?? null;
  }

  /** LivenessSweep: this socket's turn to be pinged. */
  ping(): void {
    this.conn.send(PING_FRAME_TEXT);
  }

  /** LivenessSweep: nothing was heard for a whole interval after a ping. */
  timedOut(): void {
    this.conn.close(CloseCode.pingTimeout, 'no frame for a ping interval: reconnect');
  }

  onBinary(): void {
    this.alive?.heard();
    this.refuseFrame(relayError('frame_binary', 'binary frames are not part of the protocol; send JSON text'));
  }

  onText(text: string, byteLength: number): void {
    // Any frame, a `pong` or anything else, proves the client still reads.
    this.alive?.heard();
    try {
      this.handle(text, byteLength);
    } catch (error) {
      this.fault(error);
    }
  }

  private handle(text: string, byteLength: number): void {
    const read = readClientFrame(text, byteLength, this.deps.maxFrameBytes);
    switch (read.kind) {
      case 'too_large':
        this.deps.metrics.limitBreach('frame_size');
        return this.refuseFrame(read.error);
      case 'unusable':
        return this.refuseFrame(read.error, read.sid);
      case 'unauthorized':
        // A refusal of authorization, not garbage: it ends a run of unusable frames.
        this.violations?.usable();
        this.deps.metrics.authFailures.inc({ reason: read.error.code });
        return this.reject(read.error, read.sid);
      case 'frame':
        this.violations?.usable();
        return this.dispatch(read.frame, text);
    }
  }

  private dispatch(frame: ClientFrame, text: string): void {
    switch (frame.op) {
      case 'subscribe':
        this.subscribe(frame).catch((error: unknown) => this.fault(error));
        return;
      case 'unsubscribe':
        this.unsubscribe(frame.sid, 'client');
        return;
      case 'refresh':
        this.refresh(frame).catch((error: unknown) => this.fault(error));
        return;
      case 'ping': {
        // `t` goes back as the client wrote it: re-serializing the parsed double would turn
        // 18446744073709551616 into 18446744073709552000 and 1.50 into 1.5.
        const raw = frame.t === undefined ? null : rawNumberMember(text, 't');
        this.conn.send(raw === null ? pongFrameText(frame.t) : pongEchoFrameText(raw));
        return;
      }
      case 'pong':
        // The answer to the relay's ping: the edge already counted the frame as heard.
        return;
    }
  }

  /** Last position of every subscription, for a drain notice. */
  positions(): Array<{ sid: string; stream: string; id: StreamId }> {
    const out: Array<{ sid: string; stream: string; id: StreamId }> = [];
    for (const sub of this.subs.values()) {
      if (sub.state === 'active') out.push({ sid: sub.sid, stream: sub.stream, id: sub.position() });
    }
    return out;
  }

  /**
   * Drain notice: where each subscription resumes, then close 4000. Both in one tick, so no
   * event frame can slip in between the positions and the close.
   */
  drain(sinceDrainMs: number): void {
    if (this.closed || this.conn.closed) return;
    this.deps.metrics.drainNotices.inc();
    this.conn.send(reconnectFrameText(this.positions(), sinceDrainMs));
    this.conn.close(CloseCode.drainReconnect, 'relay draining: reconnect now');
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

  /** The socket is gone: release everything without writing to it. */
  onClose(): void {
    if (this.closed) return;
    this.closed = true;
    this.deps.metrics.connections.dec();
    for (const sub of this.subs.values()) this.release(sub);
    this.subs.clear();
    if (this.alive !== null) this.deps.liveness?.remove(this.alive);
    this.alive = null;
    this.deps.onClosed?.(this, this.conn);
  }

  /** A frame the relay cannot use: answered, and a socket sending nothing else is closed (4400). */
  private refuseFrame(error: RelayError, sid?: string): void {
    this.reject(error, sid);
    this.violations ??= new ProtocolViolationGuard();
    if (!this.violations.refused() || this.closed || this.conn.closed) return;
    this.deps.metrics.limitBreach('protocol_violation');
    this.conn.close(CloseCode.protocolViolation, 'protocol violation: only unusable frames received');
  }

  /**
   * An unexpected fault while serving this socket (a bug, not bad input): its state can no
   * longer be trusted, so the client is told (`internal`) and closed with 4005; it reconnects
   * with backoff and resumes every subscription from its own positions.
   */
  private fault(error: unknown): void {
    this.deps.log.error({ err: error }, 'session fault: closing the socket with 4005');
    if (this.closed || this.conn.closed) return;
    this.reject(relayError('internal', 'unexpected relay fault; reconnect and resume'));
    this.conn.close(CloseCode.internalError, 'internal error: reconnect with backoff');
  }

  private reject(error: RelayError, sid?: string): void {
    this.deps.metrics.frameError(error.code);
    this.send(errorFrameText(error.code, error.retryable, error.message, sid));
  }

  private send(text: string): void {
    if (!this.closed && !this.conn.closed) this.conn.send(text);
  }

  private async subscribe(frame: SubscribeFrame): Promise<void> {
    const { sid } = frame;
    if (this.subs.has(sid))
      return this.reject(relayError('duplicate_subscription', `subscription ${sid} already exists on this socket`), sid);
    if (this.subs.size >= this.deps.maxSubscriptions) {
      this.deps.metrics.limitBreach('subscriptions');
      return this.reject(relayError('too_many_subscriptions', `at most ${this.deps.maxSubscriptions} subscriptions per socket`), sid);
    }
    const pending: SessionSubscription = { state: 'authorizing', sid };
    this.subs.set(sid, pending);
    const verified = await this.deps.verifier.verify(frame.token);
    // The socket closed or the client unsubscribed while the token was checked.
    if (this.closed || this.subs.get(sid) !== pending) return;
    if (!verified.ok) {
      this.subs.delete(sid);
      this.deps.metrics.authFailures.inc({ reason: verified.error.code });
      return this.reject(verified.error, sid);
    }
    const claims = verified.claims;
    if (this.holdsStream(claims.stream)) {
      this.subs.delete(sid);
      return this.reject(relayError('duplicate_stream', `this socket already subscribes to ${claims.stream}`), sid);
    }
    const hub = this.deps.hubFor(claims.redis);
    const hubSub: HubSubscriber = hub.subscribe(this.conn, sid, claims.stream, frame.from, claims.exp, this.hubEnded);
    const active = new ActiveSubscription(sid, claims, hub, hubSub, new TokenTimers(this.timerOptions, sid, this));
    this.subs.set(sid, active);
    this.deps.metrics.subscriptions.inc();
    active.armTimers(claims);
    const started = await hubSub.started;
    if (!started.ok && this.subs.get(sid) === active) {
      this.drop(active);
      if (started.error.code !== 'unknown_subscription') this.reject(started.error, sid);
    }
  }

  /** For the token timers of subscription `sid`: time to ask for a new token. */
  refreshDue(sid: string, exp: number): void {
    this.send(refreshTokenFrameText(sid, exp));
  }

  /** For the token timers of subscription `sid`: its token ran out. */
  expired(sid: string): void {
    this.deps.metrics.refreshes.inc({ outcome: 'expired' });
    this.unsubscribe(sid, 'token_expired');
  }

  /** The hub ended an established subscription; the client hears `unsubscribed` with the reason. */
  private endedByHub(sub: SessionSubscription, error: RelayError): void {
    this.deps.log.debug({ sid: sub.sid, code: error.code, message: error.message }, 'subscription ended by the hub');
    this.drop(sub);
    this.send(unsubscribedFrameText(sub.sid, error.code));
  }

  private unsubscribe(sid: string, reason: 'client' | RelayError['code']): void {
    const sub = this.subs.get(sid);
    if (sub === undefined) {
      if (reason === 'client') this.reject(relayError('unknown_subscription', `no subscription ${sid} on this socket`), sid);
      return;
    }
    this.drop(sub);
    this.send(unsubscribedFrameText(sid, reason));
  }

  private async refresh(frame: RefreshFrame): Promise<void> {
    const sub = this.subs.get(frame.sid);
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

/** The timer settings of every session made from the same deps, shared: one object per pod, not per socket. */
const timerOptionsByDeps = new WeakMap<SessionDeps, TokenTimersOptions>();

function timerOptionsOf(deps: SessionDeps): TokenTimersOptions {
  let options = timerOptionsByDeps.get(deps);
  if (options === undefined) {
    const clock: Clock = deps.clock ?? systemClock;
    options = {
      deadlines: DeadlineQueue.of(clock),
      random: deps.random ?? Math.random,
      refreshLeadSeconds: deps.refreshLeadSeconds,
      clockSkewSeconds: deps.clockSkewSeconds,
    };
    timerOptionsByDeps.set(deps, options);
  }
  return options;
}

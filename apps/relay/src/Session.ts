import { CloseCode, relayError } from '@streamgate/protocol';
import type { ClientFrame, ClientPongFrame, RelayError } from '@streamgate/protocol';
import type { Logger } from 'pino';
import type { Connection } from './core/Connection.js';
import { PING_FRAME_TEXT } from './core/serverFrames.js';
import type { LivenessMember, LivenessSweep, LivenessTarget } from './liveness/LivenessSweep.js';
import type { StreamHub } from './core/StreamHub.js';
import { readClientFrame } from './readClientFrame.js';
import { SessionSubscriptions } from './SessionSubscriptions.js';
import { pongEchoFrameText, pongFrameText, reconnectFrameText, welcomeFrameText } from './core/serverFrames.js';
import type { Verifier } from './revocation/RevokingVerifier.js';
import type { RelayMetrics } from './RelayMetrics.js';
import { systemClock } from '@streamgate/protocol';
import { ProtocolViolationGuard } from './limits/ProtocolViolationGuard.js';
import { rawNumberMember } from './rawNumberMember.js';
import { DeadlineQueue } from './DeadlineQueue.js';
import type { TokenEvents, TokenTimersOptions } from './TokenTimers.js';
import type { Clock } from '@streamgate/protocol';

/**
 * The `pong` every client sends, byte for byte: 400 a second at 10,000 sockets. Taken as it is,
 * it skips the JSON parse and the schema (8-15 µs each); any other spelling is parsed.
 */
const PONG_TEXT = JSON.stringify({ op: 'pong' } satisfies ClientPongFrame);

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
 * One client socket's protocol state: frames in, liveness, drain and close, over the
 * subscriptions it extends. It speaks frames over a Connection and knows nothing of uWS. Every
 * bad input is answered with a typed error frame and leaves the session serving.
 */
export class Session extends SessionSubscriptions<SessionDeps> implements TokenEvents, LivenessTarget {
  private alive: LivenessMember | null = null;
  /** Made on the first unusable frame: most sockets never send one, and an idle one should not hold it. */
  private violations: ProtocolViolationGuard | null = null;

  constructor(conn: Connection, deps: SessionDeps) {
    super(conn, deps, timerOptionsOf(deps));
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

  /** A WebSocket ping or pong: the client is there and its frames reach the relay (§8 Liveness). */
  onControl(): void {
    this.alive?.heard();
  }

  onBinary(): void {
    this.alive?.heard();
    this.refuseFrame(relayError('frame_binary', 'binary frames are not part of the protocol; send JSON text'));
  }

  onText(text: string, byteLength: number): void {
    // Any frame, a `pong` or anything else, proves the client still reads.
    this.alive?.heard();
    if (text === PONG_TEXT && byteLength <= this.deps.maxFrameBytes) {
      // A usable frame, which ends a run of unusable ones; the relay answers nothing to it.
      this.violations?.usable();
      return;
    }
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

  /**
   * Drain notice: where each subscription resumes, then close 4000. Both in one tick, so no
   * event frame can slip in between the positions and the close.
   */
  drain(sinceDrainMs: number, dueMs: number): void {
    if (!this.writable()) return;
    this.deps.metrics.drainNotices.inc();
    this.conn.send(reconnectFrameText(this.positions(), sinceDrainMs, dueMs));
    this.conn.close(CloseCode.drainReconnect, 'relay draining: reconnect now');
  }

  /** The socket is gone: release everything without writing to it. */
  onClose(): void {
    if (!this.markClosed()) return;
    this.deps.metrics.connections.dec();
    this.releaseAll();
    if (this.alive !== null) this.deps.liveness?.remove(this.alive);
    this.alive = null;
    this.deps.onClosed?.(this, this.conn);
  }

  /** A frame the relay cannot use: answered, and a socket sending nothing else is closed (4400). */
  private refuseFrame(error: RelayError, sid?: string): void {
    this.reject(error, sid);
    this.violations ??= new ProtocolViolationGuard();
    if (!this.violations.refused() || !this.writable()) return;
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
    if (!this.writable()) return;
    this.reject(relayError('internal', 'unexpected relay fault; reconnect and resume'));
    this.conn.close(CloseCode.internalError, 'internal error: reconnect with backoff');
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

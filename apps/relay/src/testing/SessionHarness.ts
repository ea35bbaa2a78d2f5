import { pino } from 'pino';
import { RelayMetrics } from '../RelayMetrics.js';
import { Session } from '../Session.js';
import type { SessionDeps } from '../Session.js';
import { TokenVerifier } from '../auth/TokenVerifier.js';
import { StreamHub } from '../core/StreamHub.js';
import { FakeConnection } from './FakeConnection.js';
import { FakeTopicPublisher } from './FakeTopicPublisher.js';
import { ManualClock } from '@streamgate/protocol/testing';
import { MemoryStreamSource } from './MemoryStreamSource.js';
import { TestTokens } from './TestTokens.js';

export interface SessionHarnessOptions {
  readonly startMs?: number;
  readonly maxFrameBytes?: number;
  readonly maxSubscriptions?: number;
  readonly refreshLeadSeconds?: number;
  readonly clockSkewSeconds?: number;
  readonly random?: () => number;
}

/**
 * Sessions wired as createRelay wires them, with every part in memory: a real TokenVerifier and
 * StreamHub over a MemoryStreamSource, fake sockets on a fake pub/sub, and one manual clock shared
 * by the verifier, the sessions and the source's ids.
 */
export class SessionHarness {
  readonly metrics = new RelayMetrics();
  readonly publisher = new FakeTopicPublisher();
  readonly source: MemoryStreamSource;
  readonly hub: StreamHub;
  readonly verifier: TokenVerifier;
  readonly deps: SessionDeps;

  private constructor(
    readonly clock: ManualClock,
    readonly tokens: TestTokens,
    options: SessionHarnessOptions,
  ) {
    this.source = new MemoryStreamSource(null, () => clock.now());
    this.hub = new StreamHub({
      source: this.source,
      publisher: this.publisher,
      metrics: this.metrics.hub,
      topicPrefix: '0|',
      catchUpPageSize: 50,
      maxBufferedBytes: 1 << 20,
      maxPendingCatchUpBytes: 1 << 18,
      lingerMs: 0,
    });
    this.source.attach(this.hub.listener);
    const clockSkewSeconds = options.clockSkewSeconds ?? 30;
    this.verifier = new TokenVerifier({
      keys: tokens.keys,
      algorithms: ['ES256'],
      audience: TestTokens.AUDIENCE,
      issuer: TestTokens.ISSUER,
      clockSkewSeconds,
      redisAllowlist: new Set([TestTokens.REDIS, TestTokens.OTHER_REDIS]),
      now: () => clock.now(),
    });
    this.deps = {
      verifier: this.verifier,
      hubFor: (target) => {
        if (target !== TestTokens.REDIS) throw new Error(`no hub for ${target}`);
        return this.hub;
      },
      nodeId: 'relay-test',
      maxFrameBytes: options.maxFrameBytes ?? 16_384,
      maxSubscriptions: options.maxSubscriptions ?? 100,
      refreshLeadSeconds: options.refreshLeadSeconds ?? 30,
      clockSkewSeconds,
      metrics: this.metrics,
      log: pino({ level: 'silent' }),
      clock,
      ...(options.random === undefined ? {} : { random: options.random }),
    };
  }

  static async create(options: SessionHarnessOptions = {}): Promise<SessionHarness> {
    const clock = new ManualClock(options.startMs ?? Date.UTC(2026, 0, 1));
    return new SessionHarness(clock, await TestTokens.create(() => clock.now()), options);
  }

  /** A new socket and its session, welcomed; closing the socket runs the session's onClose. */
  open(): { conn: FakeConnection; session: Session } {
    const conn = new FakeConnection(this.publisher, () => this.clock.now());
    const session = new Session(conn, this.deps);
    conn.onClose(() => session.onClose());
    session.open();
    return { conn, session };
  }
}

/** Hands a client frame to a session as the edge would (an object is serialized first). */
export function sendFrame(session: Session, frame: string | Record<string, unknown>): void {
  const text = typeof frame === 'string' ? frame : JSON.stringify(frame);
  session.onText(text, Buffer.byteLength(text));
}

import type { PublishPacket } from 'aedes';
import { isLive } from './SessionRegistry.js';
import type { VenueSessionState } from './SessionRegistry.js';
import type { VenueKind } from './venueKinds.js';

/** What the venue has pushed so far. */
export interface VenueSimPublished {
  /** PUBLISH packets handed to sessions. */
  total: number;
  byKind: Record<VenueKind, number>;
  /** By session id; a reconnect under the same id keeps adding to its count. */
  bySession: Record<string, number>;
  /** Session-ticks skipped because that session's socket had not drained. */
  skippedBackpressure: number;
  /** Timer rounds run. */
  rounds: number;
}

export interface PublishLoopOptions {
  intervalMs: number;
  /** Kinds the venue publishes at all; a subscribed kind outside this set stays dark. */
  kinds: readonly VenueKind[];
  sessions: () => Iterable<VenueSessionState>;
}

const noop = (): void => undefined;
const round = (value: number, digits = 4): number => Math.round(value * 10 ** digits) / 10 ** digits;

/** A stable starting price per symbol, so two runs show the same ballpark for the same name. */
function basePrice(symbol: string): number {
  let hash = 0;
  for (let i = 0; i < symbol.length; i += 1) hash = (hash * 31 + symbol.charCodeAt(i)) >>> 0;
  return 10 + (hash % 10_000);
}

/**
 * The venue's data plane: ONE timer for the whole venue. Each round visits every registered,
 * unsilenced session once and pushes one QoS 0 PUBLISH per (symbol, kind) it holds, straight to
 * that connection (no MQTT SUBSCRIBE involved, as on the real venue). A (symbol, kind) gets one
 * seq and one payload per round, shared by every session holding it, so seq is venue-wide and
 * a symbol that moves between sessions continues its sequence.
 */
export class PublishLoop {
  private readonly seq = new Map<string, number>();
  private readonly prices = new Map<string, number>();
  private readonly kinds: ReadonlySet<VenueKind>;
  private readonly counters: VenueSimPublished = {
    total: 0,
    byKind: { snapshot: 0, quote: 0, tick: 0 },
    bySession: {},
    skippedBackpressure: 0,
    rounds: 0,
  };
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: PublishLoopOptions) {
    if (!(options.intervalMs > 0)) throw new RangeError(`publishIntervalMs must be > 0, got ${options.intervalMs}`);
    this.kinds = new Set(options.kinds);
  }

  start(): void {
    this.timer ??= setInterval(() => this.round(), this.options.intervalMs);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  published(): VenueSimPublished {
    return { ...this.counters, byKind: { ...this.counters.byKind }, bySession: { ...this.counters.bySession } };
  }

  /** One round; public so a test can drive the loop without waiting for the timer. */
  round(): void {
    this.counters.rounds += 1;
    const payloads = new Map<string, Buffer>();
    const ts = Date.now();
    for (const session of this.options.sessions()) {
      const { client } = session;
      if (session.silenced || session.subscribed.size === 0 || !isLive(client)) continue;
      const conn = client.conn;
      // A reader that does not keep up is skipped, not queued for: the venue's data is live, and
      // buffering it would grow memory without bound while the client falls further behind.
      if (conn.writableNeedDrain) {
        this.counters.skippedBackpressure += 1;
        continue;
      }
      let sent = 0;
      conn.cork();
      for (const [symbol, kinds] of session.subscribed) {
        for (const kind of kinds) {
          if (!this.kinds.has(kind)) continue;
          const topic = `${kind}/${symbol}`;
          let payload = payloads.get(topic);
          if (payload === undefined) {
            payload = this.payload(symbol, kind, topic, ts);
            payloads.set(topic, payload);
          }
          const packet: PublishPacket = { cmd: 'publish', topic, payload, qos: 0, retain: false, dup: false };
          client.publish(packet, noop);
          this.counters.byKind[kind] += 1;
          sent += 1;
        }
      }
      // aedes writes each QoS 0 packet from its own setImmediate, queued just now in order; an
      // uncork queued after them turns the session's whole round into one write.
      setImmediate(() => conn.uncork());
      this.counters.total += sent;
      this.counters.bySession[session.id] = (this.counters.bySession[session.id] ?? 0) + sent;
    }
  }

  private payload(symbol: string, kind: VenueKind, topic: string, ts: number): Buffer {
    const seq = (this.seq.get(topic) ?? 0) + 1;
    this.seq.set(topic, seq);
    const last = this.prices.get(symbol) ?? basePrice(symbol);
    const price = round(last * (1 + (Math.random() - 0.5) * 0.001));
    this.prices.set(symbol, price);
    const base = { symbol, kind, seq, ts };
    switch (kind) {
      case 'snapshot':
        return Buffer.from(JSON.stringify({ ...base, price }));
      case 'quote': {
        const half = round(price * 0.0002);
        return Buffer.from(JSON.stringify({ ...base, bid: round(price - half), ask: round(price + half) }));
      }
      case 'tick':
        return Buffer.from(JSON.stringify({ ...base, price, size: round(0.001 + Math.random() * 2) }));
    }
  }
}

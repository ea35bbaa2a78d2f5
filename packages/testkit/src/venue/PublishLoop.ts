import { encodePublish } from './encodePublish.js';
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

const round = (value: number): number => Math.round(value * 10_000) / 10_000;

/** A stable starting price per symbol, so two runs show the same ballpark for the same name. */
function basePrice(symbol: string): number {
  let hash = 0;
  for (let i = 0; i < symbol.length; i += 1) hash = (hash * 31 + symbol.charCodeAt(i)) >>> 0;
  return 10 + (hash % 10_000);
}

/**
 * The venue's data plane: ONE timer for the whole venue. Each round visits every registered,
 * unsilenced session once and pushes one QoS 0 PUBLISH per (symbol, kind) it holds, straight to
 * that connection (no MQTT SUBSCRIBE involved, as on the real venue), as one write per session. A (symbol, kind) gets one
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

  /** The venue restarted its numbering: every (symbol, kind) continues from seq 1, its `ts` still the time. */
  restartSequences(): void {
    this.seq.clear();
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
    const frames = new Map<string, Buffer>();
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
      const batch: Buffer[] = [];
      for (const [symbol, kinds] of session.subscribed) {
        for (const kind of kinds) {
          if (!this.kinds.has(kind)) continue;
          const topic = `${kind}/${symbol}`;
          let frame = frames.get(topic);
          if (frame === undefined) {
            frame = encodePublish(topic, this.payload(symbol, kind, topic, ts));
            frames.set(topic, frame);
          }
          batch.push(frame);
          this.counters.byKind[kind] += 1;
        }
      }
      if (batch.length === 0) continue;
      // The whole round for this session in one write. aedes' own client.publish costs an object
      // and a setImmediate per packet, half the event loop at 500 symbols x 3 kinds every 50 ms;
      // QoS 0 frames carry no broker state, and aedes writes its own packets synchronously, so a
      // frame of ours never lands inside one of its.
      conn.write(Buffer.concat(batch));
      this.counters.total += batch.length;
      this.counters.bySession[session.id] = (this.counters.bySession[session.id] ?? 0) + batch.length;
    }
  }

  private payload(symbol: string, kind: VenueKind, topic: string, ts: number): string {
    const seq = (this.seq.get(topic) ?? 0) + 1;
    this.seq.set(topic, seq);
    const last = this.prices.get(symbol) ?? basePrice(symbol);
    const price = round(last * (1 + (Math.random() - 0.5) * 0.001));
    this.prices.set(symbol, price);
    // Built as text rather than JSON.stringify of an object: this runs 30 000 times a second at
    // the intended load, and symbols that reach a subscription match VENUE_SYMBOL_PATTERN, so
    // nothing here needs escaping.
    const head = `{"symbol":"${symbol}","kind":"${kind}","seq":${seq},"ts":${ts}`;
    switch (kind) {
      case 'snapshot':
        return `${head},"price":${price}}`;
      case 'quote': {
        const half = round(price * 0.0002);
        return `${head},"bid":${round(price - half)},"ask":${round(price + half)}}`;
      }
      case 'tick':
        return `${head},"price":${price},"size":${round(0.001 + Math.random() * 2)}}`;
    }
  }
}

import { newLatencyHistogram } from '../latencyHistogram.js';
import type { Histogram } from 'hdr-histogram-js';
import { RawWsClient } from './RawWsClient.js';
import type { FrameSink } from './RawWsClient.js';
import type { Protocol, ProtocolSubscription } from './protocols.js';

/** Counters shared by every client of one load worker. */
export interface LoadTotals {
  received: number;
  errors: number;
  gaps: number;
  duplicates: number;
  /** Events intended before this time (ms since the epoch) belong to an earlier window. */
  since: number;
  readonly histogram: Histogram;
  /**
   * Of the same events, those whose frame carries a Redis stream id: from the id's time (Redis's
   * clock when it wrote the entry, in whole ms) to the frame's arrival: the server's share of the
   * latency, with this client's own delay in reading the frame; the rest is the writer's. A
   * JetStream id (`0-<seq>`) carries no time: those events are not in it.
   */
  readonly fromWrite: Histogram;
  readonly backAt: number[];
}

/** Counters at zero and empty histograms: a worker's start, and each closeAll. */
export function newLoadTotals(): LoadTotals {
  return {
    received: 0,
    errors: 0,
    gaps: 0,
    duplicates: 0,
    since: 0,
    histogram: newLatencyHistogram(),
    fromWrite: newLatencyHistogram(),
    backAt: [],
  };
}

const Q = Buffer.from('"q":');
const ID = Buffer.from('"id":"');
const MAX_LATENCY_US = 100_000_000;
const DEBUG = process.env.BENCH_DEBUG === '1';

/**
 * One benchmark client: subscribes, then only counts events and records their latency. The
 * payload is `{"q":<seq>,"t":<intended send time, ms>,…}`, found by one byte search per frame.
 */
export class LoadClient implements FrameSink {
  private readonly ws: RawWsClient;
  private readonly subs: ProtocolSubscription[];
  private acked = 0;
  ready = false;
  private lastSeq = -1;
  private lastId: string | undefined;
  private attempt = 0;
  private stopped = false;

  constructor(
    port: number,
    private readonly protocol: Protocol,
    subs: ProtocolSubscription[],
    private readonly totals: LoadTotals,
    private readonly options: { trackSeq: boolean; trackId: boolean; reconnect: boolean; onReady: () => void },
  ) {
    this.subs = subs;
    this.ws = new RawWsClient(port, protocol.path, this);
  }

  start(): void {
    this.ws.connect();
  }

  stop(): void {
    this.stopped = true;
    this.ws.close();
  }

  /** The server moved (restarted elsewhere): reconnect there from now on. */
  retarget(port: number): void {
    this.ws.port = port;
  }

  get seq(): number {
    return this.lastSeq;
  }

  opened(): void {
    this.acked = 0;
    const subs = this.lastId === undefined ? this.subs : this.subs.map((s) => ({ ...s, from: this.lastId }));
    this.protocol.onOpen(subs, (text) => this.ws.sendText(text));
  }

  closed(): void {
    const wasReady = this.ready;
    this.ready = false;
    if (this.stopped || !this.options.reconnect) return;
    // Full-jitter exponential backoff, as the streamgate client does.
    const delay = Math.random() * Math.min(2_000, 100 * 2 ** this.attempt);
    this.attempt = wasReady ? 1 : this.attempt + 1;
    setTimeout(() => {
      if (!this.stopped) this.ws.connect();
    }, delay);
  }

  text(buf: Buffer, start: number, end: number, now: number): void {
    const at = buf.indexOf(Q, start);
    if (at < 0 || at >= end) {
      this.control(buf.toString('utf8', start, end));
      return;
    }
    let i = at + 4;
    let seq = 0;
    let c = buf[i] as number;
    while (c >= 48 && c <= 57) {
      seq = seq * 10 + c - 48;
      c = buf[++i] as number;
    }
    i += 5; // ,"t":
    let t = 0;
    c = buf[i] as number;
    while (c >= 48 && c <= 57) {
      t = t * 10 + c - 48;
      c = buf[++i] as number;
    }
    if (c === 46) {
      let scale = 0.1;
      c = buf[++i] as number;
      while (c >= 48 && c <= 57) {
        t += (c - 48) * scale;
        scale /= 10;
        c = buf[++i] as number;
      }
    }
    const totals = this.totals;
    const idAt = buf.indexOf(ID, start);
    const hasId = idAt >= 0 && idAt < at;
    if (this.options.trackSeq) {
      if (this.lastSeq >= 0) {
        if (seq > this.lastSeq + 1) totals.gaps += seq - this.lastSeq - 1;
        else if (seq <= this.lastSeq) totals.duplicates++;
      }
      if (seq > this.lastSeq) this.lastSeq = seq;
      if (this.options.trackId) {
        if (hasId) this.lastId = buf.toString('latin1', idAt + 6, buf.indexOf(34, idAt + 6));
      }
    }
    if (t < totals.since) return;
    totals.received++;
    const us = Math.round((now - t) * 1000);
    totals.histogram.recordValue(us < 1 ? 1 : us > MAX_LATENCY_US ? MAX_LATENCY_US : us);
    if (hasId) {
      // The id's time is whole milliseconds, rounded down: the share is read up to 1 ms high.
      let ms = 0;
      let j = idAt + ID.length;
      c = buf[j] as number;
      while (c >= 48 && c <= 57) {
        ms = ms * 10 + c - 48;
        c = buf[++j] as number;
      }
      // A JetStream entry's id is `0-<stream sequence>`: it carries no time, so no share is read.
      if (ms > 0) {
        const fromWrite = Math.round((now - ms) * 1000);
        totals.fromWrite.recordValue(fromWrite < 1 ? 1 : fromWrite > MAX_LATENCY_US ? MAX_LATENCY_US : fromWrite);
      }
    }
  }

  private control(text: string): void {
    if (DEBUG) process.stderr.write(`load client: ${text.slice(0, 300)}\n`);
    const n = this.protocol.onControl(text, this.subs, (reply) => this.ws.sendText(reply));
    if (n < 0) {
      this.totals.errors++;
      return;
    }
    this.acked += n;
    if (n > 0 && this.acked >= this.subs.length && !this.ready) {
      this.ready = true;
      if (this.attempt > 0) this.totals.backAt.push(Date.now());
      this.attempt = 0;
      this.options.onReady();
    }
  }
}

import type { RunContext, RunEnd, WriteBatch, WriteOutcome } from '@streamgate/ingest-core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SymbolWriter } from './SymbolWriter.js';
import type { VenuePayload } from './venueSchemas.js';

interface PendingWrite {
  readonly batch: WriteBatch;
  resolve(outcome: WriteOutcome): void;
  reject(error: Error): void;
}

/** A RunContext whose writes stay in flight until the test answers them. */
class FakeContext implements RunContext {
  readonly key = 'venue:sim:AAA';
  readonly state = new Map<string, string>();
  readonly signal = new AbortController().signal;
  readonly writes: PendingWrite[] = [];

  write(batch: WriteBatch): Promise<WriteOutcome> {
    return new Promise((resolve, reject) => this.writes.push({ batch, resolve, reject }));
  }

  /** Dedupe ids of the n-th write. */
  ids(n: number): string[] {
    return (this.writes[n]?.batch.entries ?? []).map((e) => e.dedupeId);
  }

  ok(n: number): void {
    const write = this.writes[n];
    if (write === undefined) throw new Error(`no write #${n}`);
    write.resolve({ ok: true, written: write.batch.entries.length, duplicates: 0, ids: write.batch.entries.map((_, i) => `${i}-0`) });
  }

  refuse(n: number, error: Extract<WriteOutcome, { ok: false }>['error']): void {
    const write = this.writes[n];
    if (write === undefined) throw new Error(`no write #${n}`);
    write.resolve({ ok: false, error });
  }
}

const quote = (seq: number): VenuePayload => ({ kind: 'quote', symbol: 'AAA', seq, ts: 1_000 + seq, bid: 1, ask: 2 });
const snapshot = (seq: number): VenuePayload => ({ kind: 'snapshot', symbol: 'AAA', seq, ts: 1_000 + seq, price: 1.5 });
const REDIS_DOWN = { code: 'redis_unavailable', retryable: true, message: 'connection lost' } as const;

function setup(maxBuffer = 100) {
  const ctx = new FakeContext();
  const ends: RunEnd[] = [];
  let dropped = 0;
  const writer = new SymbolWriter(ctx, maxBuffer, (end) => ends.push(end), { dropped: (n) => (dropped += n) });
  return { ctx, writer, ends, dropped: () => dropped };
}

/** Lets write outcomes reach the writer. */
const settle = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.useRealTimers();
});

describe('SymbolWriter', () => {
  it('keeps one write in flight and sends what arrived meanwhile as the next batch, with <kind>:<seq> dedupe ids', async () => {
    const { ctx, writer, ends } = setup();
    writer.push(quote(1));
    expect(ctx.writes).toHaveLength(1);
    expect(ctx.ids(0)).toEqual(['quote:1']);
    expect(JSON.parse(ctx.writes[0]?.batch.entries[0]?.data ?? 'null')).toEqual(quote(1));

    writer.push(snapshot(1));
    writer.push(quote(2));
    await settle();
    expect(ctx.writes).toHaveLength(1);

    ctx.ok(0);
    await settle();
    expect(ctx.writes).toHaveLength(2);
    // A snapshot and a quote may share a seq: the kind keeps them apart.
    expect(ctx.ids(1)).toEqual(['snapshot:1', 'quote:2']);

    ctx.ok(1);
    await settle();
    expect(ctx.writes).toHaveLength(2);
    writer.push(quote(3));
    expect(ctx.ids(2)).toEqual(['quote:3']);
    expect(ends).toEqual([]);
  });

  it('retries a retryable refusal after a backoff, the failed batch first, losing nothing', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { ctx, writer, ends } = setup();
    writer.push(quote(1));
    writer.push(quote(2));
    ctx.refuse(0, REDIS_DOWN);
    await settle();
    writer.push(quote(3));
    // Backing off: first retry after 0.5 × 100 ms, not at once and not on the next push.
    expect(ctx.writes).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(49);
    expect(ctx.writes).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(ctx.writes).toHaveLength(2);
    expect(ctx.ids(1)).toEqual(['quote:1', 'quote:2', 'quote:3']);

    // A second refusal backs off longer (0.5 × 200 ms).
    ctx.refuse(1, REDIS_DOWN);
    await settle();
    await vi.advanceTimersByTimeAsync(99);
    expect(ctx.writes).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(ctx.ids(2)).toEqual(['quote:1', 'quote:2', 'quote:3']);

    // Success resets the backoff.
    ctx.ok(2);
    await settle();
    writer.push(quote(4));
    ctx.refuse(3, REDIS_DOWN);
    await settle();
    await vi.advanceTimersByTimeAsync(50);
    expect(ctx.ids(4)).toEqual(['quote:4']);
    expect(ends).toEqual([]);
  });

  it.each([
    ['fenced', { code: 'fenced', retryable: false, message: 'stale token' }, { reason: 'fenced' }],
    ['stopped', { code: 'stopped', retryable: false, message: 'key stopped' }, { reason: 'stopped' }],
    [
      'wrong_type',
      { code: 'wrong_type', retryable: false, message: 'not a stream' },
      { reason: 'failed', error: { code: 'wrong_type', retryable: false, message: 'not a stream' } },
    ],
  ] as const)('ends the run on %s and writes nothing more', async (_name, error, expected) => {
    const { ctx, writer, ends } = setup();
    writer.push(quote(1));
    writer.push(quote(2));
    ctx.refuse(0, error);
    await settle();
    expect(ends).toEqual([expected]);
    writer.push(quote(3));
    await vi.advanceTimersByTimeAsync(10_000);
    expect(ctx.writes).toHaveLength(1);
    expect(ends).toHaveLength(1);
  });

  it('ends the run as failed (retryable) when a write throws', async () => {
    const { ctx, writer, ends } = setup();
    writer.push(quote(1));
    ctx.writes[0]?.reject(new Error('socket closed'));
    await settle();
    expect(ends).toEqual([{ reason: 'failed', error: { code: 'redis_unavailable', retryable: true, message: 'Error: socket closed' } }]);
    writer.push(quote(2));
    expect(ctx.writes).toHaveLength(1);
  });

  it('bounds what waits behind a slow write: the oldest go first and are counted', async () => {
    const { ctx, writer, dropped } = setup(3);
    writer.push(quote(1));
    for (let seq = 2; seq <= 7; seq++) writer.push(quote(seq));
    expect(dropped()).toBe(3);
    ctx.ok(0);
    await settle();
    expect(ctx.ids(1)).toEqual(['quote:5', 'quote:6', 'quote:7']);
  });

  it('keeps the bound when a retryable refusal puts its batch back in front', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const { ctx, writer, dropped } = setup(3);
    writer.push(quote(1));
    writer.push(quote(2));
    writer.push(quote(3));
    writer.push(quote(4));
    expect(dropped()).toBe(0);
    ctx.refuse(0, REDIS_DOWN);
    await settle();
    await vi.advanceTimersByTimeAsync(0);
    expect(ctx.writes).toHaveLength(2);
    expect(ctx.ids(1)).toEqual(['quote:2', 'quote:3', 'quote:4']);
    expect(dropped()).toBe(1);
  });

  it('after stop(), nothing more is written, retried or ended', async () => {
    vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const { ctx, writer, ends } = setup();
    writer.push(quote(1));
    writer.push(quote(2));
    writer.stop();
    writer.push(quote(3));
    ctx.refuse(0, REDIS_DOWN);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(ctx.writes).toHaveLength(1);
    expect(vi.getTimerCount()).toBe(0);
    expect(ends).toEqual([]);

    const second = setup();
    second.writer.push(quote(1));
    second.writer.stop();
    second.ctx.refuse(0, { code: 'fenced', retryable: false, message: 'stale token' });
    await settle();
    // The owner already ended the run when it stopped the writer.
    expect(second.ends).toEqual([]);
  });
});

describe('SymbolWriter after a venue restart', () => {
  it('writes the new numbering under new ids, records it in the state, and reports it', async () => {
    const ctx = new FakeContext();
    const restarts: unknown[] = [];
    const counts: string[] = [];
    const writer = new SymbolWriter(ctx, 100, () => undefined, {
      sequenceRestart: (stream, restart) => restarts.push({ stream, ...restart }),
      written: (stream, n) => counts.push(`${stream} written ${n}`),
    });
    writer.push(quote(7));
    ctx.ok(0);
    await settle();
    writer.push({ ...quote(1), ts: 5_000 });
    expect(ctx.ids(1)).toEqual(['quote:1@1']);
    expect(ctx.writes[1]?.batch.stateSet).toEqual({ 'seq:quote': '1 1 5000 5000' });
    expect(restarts).toEqual([{ stream: 'venue:sim:AAA', kind: 'quote', fromSeq: 7, toSeq: 1, epoch: 1 }]);
    ctx.ok(1);
    await settle();
    expect(counts).toEqual(['venue:sim:AAA written 1', 'venue:sim:AAA written 1']);
  });
});

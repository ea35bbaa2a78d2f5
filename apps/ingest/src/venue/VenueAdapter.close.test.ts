import { describe, expect, it } from 'vitest';
import type { WriteBatch } from '@streamgate/ingest-core';
import { MemoryLeaseStore, MemoryStreamWriter } from '@streamgate/ingest-core/testing';
import type { FeedAnswer } from './FeedError.js';
import { VenueAdapter } from './VenueAdapter.js';
import type { VenueFeed } from './VenueFeed.js';

const quietLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

function deferred<T>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

/*
 * Kept apart from VenueAdapter.test.ts: this is the shutdown race the cross-process test
 * (test/venue/venueIngest.test.ts) caught as a venue lease left behind by a SIGTERMed worker.
 */
describe('VenueAdapter.close', () => {
  it('waits for a shutdown the last symbol release already started, so the venue lease is released before it returns', async () => {
    const writer = new MemoryStreamWriter();
    const leases = new MemoryLeaseStore(writer, Date.now);
    const subscribed = deferred<void>();
    const unsubscribeAnswer = deferred<FeedAnswer>();
    const feedClosed = deferred<void>();
    const feed = {
      start: () => undefined,
      subscribe: () => {
        subscribed.resolve();
        return Promise.resolve<FeedAnswer>({ ok: true });
      },
      unsubscribe: () => unsubscribeAnswer.promise,
      close: () => feedClosed.promise,
    };
    const adapter = new VenueAdapter({
      venue: 'sim',
      streamPrefix: 'md.sim.',
      controlStream: 'md.sim._control',
      workerId: 'w1',
      leases,
      writer,
      leaseTtlMs: 10_000,
      maxBuffer: 100,
      log: quietLog,
      createFeed: () => feed as unknown as VenueFeed,
    });
    const abort = new AbortController();
    const run = adapter.start({
      key: 'md.sim.AAPL',
      state: new Map(),
      write: (batch: WriteBatch) => writer.write({ key: 'md.sim.AAPL', token: 1 }, batch),
      signal: abort.signal,
    });
    await subscribed.promise;

    // The worker stops the last symbol: its release waits on the venue's unsubscribe answer…
    await run.stop();
    // …which arrives just before the worker closes the adapter; that release starts the shutdown.
    unsubscribeAnswer.resolve({ ok: true });
    await settle();
    let closed = false;
    const closing = adapter.close().then(() => (closed = true));
    await settle();
    expect(closed).toBe(false);

    feedClosed.resolve();
    await closing;
    // The lease is free: another worker takes the venue at once rather than after its TTL.
    expect(await leases.acquire('md.sim._control', 'w2', 10_000)).not.toBeNull();
  });
});

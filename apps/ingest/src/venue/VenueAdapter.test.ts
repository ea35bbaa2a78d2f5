import type { AdapterRun, Fence, RunContext, RunEnd, WriteBatch, WriteOutcome } from '@streamgate/ingest-core';
import { MemoryLeaseStore, MemoryStreamWriter } from '@streamgate/ingest-core/testing';
import { startVenueSim, waitFor, withDeadline } from '@streamgate/testkit';
import type { VenueSim } from '@streamgate/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { RateLimiter } from './RateLimiter.js';
import { VenueAdapter } from './VenueAdapter.js';
import { VenueFeed } from './VenueFeed.js';
import { VenueHttpClient } from './VenueHttpClient.js';
import type { VenueNotice } from './VenueNotice.js';
import { venuePayloadSchema } from './venueSchemas.js';

const APP_KEY = 'sim-app-key';
const PREFIX = 'md.sim.';
const CONTROL = 'md.sim._control';
const LEASE_TTL_MS = 600;
const quietLog = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** The memory writer, remembering every batch with the fence it carried. */
class RecordingWriter extends MemoryStreamWriter {
  readonly batches: { fence: Fence; batch: WriteBatch; outcome: WriteOutcome }[] = [];

  override async write(fence: Fence, batch: WriteBatch): Promise<WriteOutcome> {
    const outcome = await super.write(fence, batch);
    this.batches.push({ fence, batch, outcome });
    return outcome;
  }

  entries(key: string): { data: unknown }[] {
    return (this.streams.get(key) ?? []).map((e) => ({ data: JSON.parse(e.data) as unknown }));
  }
}

function isNotice<T extends VenueNotice['type']>(data: unknown, type: T): data is Extract<VenueNotice, { type: T }> {
  return typeof data === 'object' && data !== null && 'type' in data && data.type === type;
}

interface Worker {
  readonly id: string;
  readonly adapter: VenueAdapter;
  readonly noticeWriteFailures: () => number;
  /** Starts a symbol the way the core does: its own lease, a fenced write, an abort signal. */
  start(symbol: string): Promise<{ run: AdapterRun; abort: AbortController }>;
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup({ reassertIntervalMs = 300 } = {}) {
  const sim: VenueSim = await startVenueSim({ publishIntervalMs: 50 });
  cleanups.push(() => sim.close());
  const writer = new RecordingWriter();
  // Real time, plus a skew a test can move to make leases expire.
  let skew = 0;
  const leases = new MemoryLeaseStore(writer, () => Date.now() + skew);

  const worker = (id: string): Worker => {
    let noticeWriteFailures = 0;
    const limiter = new RateLimiter({ perSecond: 200, burst: 50 });
    const http = new VenueHttpClient({ baseUrl: sim.httpUrl, appKey: APP_KEY, limiter });
    const adapter = new VenueAdapter({
      venue: 'sim',
      streamPrefix: PREFIX,
      controlStream: CONTROL,
      workerId: id,
      leases,
      writer,
      leaseTtlMs: LEASE_TTL_MS,
      maxBuffer: 10_000,
      log: quietLog,
      events: { noticeWriteFailed: () => (noticeWriteFailures += 1) },
      createFeed: ({ onPayload, onNotice }) =>
        new VenueFeed({
          venue: 'sim',
          mqttUrl: sim.mqttUrl,
          appKey: APP_KEY,
          http,
          kinds: ['snapshot', 'quote', 'tick'],
          maxSymbolsPerSession: 100,
          maxSessions: 5,
          reassertIntervalMs,
          reconcileTimeoutMs: 5_000,
          callTimeoutMs: 3_000,
          rejectedSymbolTtlMs: 86_400_000,
          coverageStaleMs: 600,
          connectTimeoutMs: 2_000,
          log: quietLog,
          onPayload,
          onNotice,
        }),
    });
    cleanups.push(() => adapter.close());
    return {
      id,
      adapter,
      noticeWriteFailures: () => noticeWriteFailures,
      start: async (symbol) => {
        const key = PREFIX + symbol;
        const lease = await leases.acquire(key, id, 60_000);
        if (lease === null) throw new Error(`${key} is held`);
        const abort = new AbortController();
        const ctx: RunContext = {
          key,
          state: new Map(),
          signal: abort.signal,
          write: (batch) => writer.write({ key, token: lease.token }, batch),
        };
        return { run: adapter.start(ctx), abort };
      },
    };
  };

  return { sim, writer, leases, worker, expireLeases: (ms: number) => (skew += ms) };
}

const ended = (run: AdapterRun, ms = 5_000): Promise<RunEnd> => withDeadline(run.ended, ms, 'the run never ended');

describe('VenueAdapter', () => {
  it('opens the feed on one worker only; a symbol started on the other fails retryably with upstream_unavailable', async () => {
    const { sim, worker } = await setup();
    const a = worker('worker-a');
    const b = worker('worker-b');
    await a.start('S000');
    await waitFor(() => a.adapter.activeFeed !== undefined, { timeoutMs: 5_000, message: 'worker A never opened the feed' });
    await waitFor(() => sim.sessions().some((s) => s.subscribed.some((x) => x.symbol === 'S000')), {
      timeoutMs: 5_000,
      message: 'S000 never subscribed at the venue',
    });

    const { run } = await b.start('S001');
    const end = await ended(run);
    expect(end).toMatchObject({
      reason: 'failed',
      error: { code: 'upstream_unavailable', retryable: true, message: expect.stringContaining('another worker') as unknown },
    });
    // A steady retry around a third of the lease TTL, not the worker's growing backoff.
    const retryAfterMs = end.reason === 'failed' ? (end.retryAfterMs ?? -1) : -1;
    expect(retryAfterMs).toBeGreaterThan(0);
    expect(b.adapter.activeFeed).toBeUndefined();
    // Only A's sessions exist at the venue, and S001 was never asked for.
    expect(sim.sessions()).toHaveLength(1);
    expect(sim.calls().flatMap((c) => c.symbols)).not.toContain('S001');
  });

  it("writes a running symbol's payloads to its own stream, deduplicated by <kind>:<seq>", async () => {
    const { writer, worker } = await setup();
    const a = worker('worker-a');
    await a.start('S000');
    await a.start('S001');
    await waitFor(
      () => ['S000', 'S001'].every((s) => new Set(writer.entries(PREFIX + s).map((e) => venuePayloadSchema.parse(e.data).kind)).size === 3),
      { timeoutMs: 8_000, message: 'not every kind of both symbols reached its stream' },
    );
    for (const symbol of ['S000', 'S001']) {
      const key = PREFIX + symbol;
      const payloads = writer.entries(key).map((e) => venuePayloadSchema.parse(e.data));
      expect(payloads.every((p) => p.symbol === symbol)).toBe(true);
      const written = writer.batches.filter((b) => b.fence.key === key).flatMap((b) => b.batch.entries);
      for (const entry of written) {
        const payload = venuePayloadSchema.parse(JSON.parse(entry.data));
        expect(entry.dedupeId).toBe(`${payload.kind}:${payload.seq}`);
      }
      const ids = payloads.map((p) => `${p.kind}:${p.seq}`);
      expect(new Set(ids).size).toBe(ids.length);
    }
  });

  it('writes notices to the control stream, fenced by the venue lease', async () => {
    const { writer, worker } = await setup();
    const a = worker('worker-a');
    await a.start('S000');
    await waitFor(() => writer.entries(CONTROL).some((e) => isNotice(e.data, 'coverage') && e.data.covered === 1), {
      timeoutMs: 8_000,
      message: 'no coverage notice for S000 in the control stream',
    });
    const notice = writer.entries(CONTROL).find((e) => isNotice(e.data, 'coverage'))?.data;
    expect(notice).toMatchObject({ type: 'coverage', venue: 'sim', wanted: 1 });
    const venueToken = writer.fences.get(CONTROL);
    expect(venueToken).toBeDefined();
    const noticeBatches = writer.batches.filter((b) => b.fence.key === CONTROL);
    expect(noticeBatches.length).toBeGreaterThan(0);
    expect(noticeBatches.every((b) => b.fence.token === venueToken && b.outcome.ok)).toBe(true);
    expect(a.noticeWriteFailures()).toBe(0);
  });

  it('stopping the last symbol closes the feed and releases the venue lease', async () => {
    const { sim, leases, worker } = await setup();
    const a = worker('worker-a');
    const first = await a.start('S000');
    const second = await a.start('S001');
    await waitFor(() => sim.sessions().some((s) => s.subscribed.length === 2), {
      timeoutMs: 5_000,
      message: 'both symbols never subscribed',
    });

    second.abort.abort();
    await second.run.stop();
    expect(await ended(second.run)).toEqual({ reason: 'stopped' });
    await waitFor(() => sim.sessions().some((s) => s.subscribed.length === 1), { timeoutMs: 5_000, message: 'S001 never unsubscribed' });
    // One symbol still runs: the feed and its lease stay.
    expect(a.adapter.activeFeed).toBeDefined();
    expect(await leases.acquire(CONTROL, 'probe', LEASE_TTL_MS)).toBeNull();

    first.abort.abort();
    await first.run.stop();
    await waitFor(() => a.adapter.activeFeed === undefined && sim.sessions().length === 0, {
      timeoutMs: 5_000,
      message: 'the feed never closed',
    });
    await waitFor(async () => (await leases.acquire(CONTROL, 'probe', LEASE_TTL_MS)) !== null, {
      timeoutMs: 5_000,
      message: 'the venue lease was never released',
    });
  });

  it('a run stopped while the feed is still opening leaves no feed, session or lease behind', async () => {
    const { sim, leases, worker } = await setup();
    const a = worker('worker-a');
    const { run, abort } = await a.start('S000');
    // The core aborts and stops at once, before the venue lease is even granted.
    abort.abort();
    await run.stop();
    expect(await ended(run)).toEqual({ reason: 'stopped' });
    await waitFor(async () => (await leases.acquire(CONTROL, 'probe', LEASE_TTL_MS)) !== null, {
      timeoutMs: 5_000,
      message: 'the venue lease is still held with no symbol running',
    });
    await waitFor(() => a.adapter.activeFeed === undefined && sim.sessions().length === 0, {
      timeoutMs: 5_000,
      message: 'a feed is still open with no symbol running',
    });
  });

  it('a symbol started again replaces its old run without unsubscribing it at the venue', async () => {
    // No re-assert tick: one in flight at the restart would hide a spurious unsubscribe.
    const { sim, writer, worker } = await setup({ reassertIntervalMs: 60_000 });
    const a = worker('worker-a');
    const first = await a.start('S000');
    const settled = () => {
      const status = a.adapter.activeFeed?.status();
      return (
        status?.pendingCalls === 0 && status.shards.length === 1 && status.shards.every((sh) => sh.attempt === null && sh.confirmed === 1)
      );
    };
    await waitFor(settled, { timeoutMs: 5_000, message: 'S000 never confirmed' });
    const key = PREFIX + 'S000';
    // The core runs the key again under a newer fence while the old run has not ended yet.
    const token = (writer.fences.get(key) ?? 0) + 1;
    writer.fences.set(key, token);
    const second = a.adapter.start({
      key,
      state: new Map(),
      signal: new AbortController().signal,
      write: (batch) => writer.write({ key, token }, batch),
    });
    expect(await ended(first.run)).toEqual({ reason: 'stopped' });
    // Settled: the new run writes, and the feed has nothing in flight and S000 confirmed. An
    // unsubscribe caused by the restart would have been sent by then (its attempt starts at once).
    const writtenBefore = writer.batches.filter((b) => b.fence.key === key && b.fence.token === token).length;
    await waitFor(
      () =>
        writer.batches.filter((b) => b.fence.key === key && b.fence.token === token && b.outcome.ok).length > writtenBefore && settled(),
      { timeoutMs: 5_000, message: 'the new run never settled' },
    );
    expect(sim.calls().filter((c) => c.op === 'unsubscribe' && c.symbols.includes('S000'))).toEqual([]);
    await second.stop();
  });

  it('losing the venue lease ends every run and closes the feed', async () => {
    const { sim, leases, writer, worker, expireLeases } = await setup();
    const a = worker('worker-a');
    const first = await a.start('S000');
    const second = await a.start('S001');
    await waitFor(() => sim.sessions().some((s) => s.subscribed.length === 2), {
      timeoutMs: 5_000,
      message: 'both symbols never subscribed',
    });
    const heldToken = writer.fences.get(CONTROL);

    // The store's clock jumps past the lease; another worker takes the venue before A renews.
    expireLeases(60_000);
    const thief = await leases.acquire(CONTROL, 'worker-b', 60_000);
    expect(thief).not.toBeNull();
    expect(thief?.token).toBeGreaterThan(heldToken ?? 0);

    const lost = { reason: 'failed', error: { code: 'upstream_unavailable', retryable: true, message: 'venue lease lost' } };
    expect(await ended(first.run)).toEqual(lost);
    expect(await ended(second.run)).toEqual(lost);
    await waitFor(() => a.adapter.activeFeed === undefined && sim.sessions().length === 0, {
      timeoutMs: 5_000,
      message: "A's sessions never disconnected",
    });
  });
  it('a refused app key ends every run with upstream_refused, reports it once, frees the venue lease, and asks the venue nothing more', async () => {
    const { sim, writer, leases, worker } = await setup();
    const a = worker('worker-a');
    const first = await a.start('S000');
    const second = await a.start('S001');
    await waitFor(() => sim.sessions().some((s) => s.subscribed.length === 2), { timeoutMs: 5_000, message: 'both symbols subscribed' });

    sim.revokeAppKey(APP_KEY);
    // The next re-assert meets the refusal; nobody needs to call.
    for (const { run } of [first, second]) {
      expect(await ended(run)).toMatchObject({
        reason: 'failed',
        error: { code: 'upstream_refused', retryable: false, message: expect.stringContaining('venue sim') as unknown },
      });
    }
    await expectKeyRefusalReleased(leases, writer, a.adapter);

    // A restarted run (the worker's backoff) fails at once, without a feed, a session or a call.
    const calls = sim.calls().length;
    const again = await a.start('S002');
    expect(await ended(again.run)).toMatchObject({ reason: 'failed', error: { code: 'upstream_refused', retryable: false } });
    expect(a.adapter.activeFeed).toBeUndefined();
    expect(sim.calls()).toHaveLength(calls);
    expect(sim.sessions()).toHaveLength(0);
  });

  it('an app key refused at CONNECT ends the run the same way: upstream_refused, one notice, the lease freed, no more dials', async () => {
    const { sim, writer, leases, worker } = await setup();
    // Only the MQTT side refuses (return code 4): no HTTP call is ever made without a CONNACK.
    sim.refuseConnects(APP_KEY, 4);
    const a = worker('worker-a');
    const first = await a.start('S000');
    expect(await ended(first.run)).toMatchObject({
      reason: 'failed',
      error: { code: 'upstream_refused', retryable: false, message: expect.stringContaining('venue sim') as unknown },
    });
    await expectKeyRefusalReleased(leases, writer, a.adapter);
    expect(sim.refusedConnects()).toHaveLength(1);

    const again = await a.start('S001');
    expect(await ended(again.run)).toMatchObject({ reason: 'failed', error: { code: 'upstream_refused', retryable: false } });
    expect(a.adapter.activeFeed).toBeUndefined();
    expect(sim.refusedConnects()).toHaveLength(1);
    expect(sim.calls()).toEqual([]);
  });
});

/** After a refused app key: the venue lease is free again, no feed is left, and one notice says so without the key. */
async function expectKeyRefusalReleased(leases: MemoryLeaseStore, writer: RecordingWriter, adapter: VenueAdapter): Promise<void> {
  await waitFor(async () => (await leases.acquire(CONTROL, 'probe', LEASE_TTL_MS)) !== null, {
    timeoutMs: 5_000,
    message: 'the venue lease was never released',
  });
  expect(adapter.activeFeed).toBeUndefined();
  const notices = writer.entries(CONTROL).filter((e) => isNotice(e.data, 'app_key_refused'));
  expect(notices).toHaveLength(1);
  expect(JSON.stringify(notices)).not.toContain(APP_KEY);
}

import { describe, expect, it } from 'vitest';
import { IngestWorker } from './IngestWorker.js';
import type { AdapterRun, RunContext, RunEnd, UpstreamAdapter } from './UpstreamAdapter.js';
import { MemoryDemandSource, MemoryLeaseStore, MemoryStreamWriter } from './testing/index.js';

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * An adapter that records its starts and stops. With `endsOnAbort` its run ends `stopped` as soon
 * as the core aborts it, as the EVM run does, before it could see why.
 */
class CountingAdapter implements UpstreamAdapter {
  readonly kind = 'counting';
  starts = 0;
  stops = 0;
  contexts: RunContext[] = [];
  constructor(private readonly endsOnAbort = false) {}
  start(ctx: RunContext): AdapterRun {
    this.starts += 1;
    this.contexts.push(ctx);
    let finish: (end: RunEnd) => void = () => undefined;
    const ended = new Promise<RunEnd>((resolve) => (finish = resolve));
    if (this.endsOnAbort) ctx.signal.addEventListener('abort', () => finish({ reason: 'stopped' }), { once: true });
    return {
      ended,
      stop: async () => {
        this.stops += 1;
        finish({ reason: 'stopped' });
        await Promise.resolve();
      },
    };
  }
}

function fleet(workers: number, { endsOnAbort = false } = {}) {
  let clock = 0;
  const now = () => clock;
  const writer = new MemoryStreamWriter();
  const leases = new MemoryLeaseStore(writer, now);
  const demand = new MemoryDemandSource();
  const adapters = Array.from({ length: workers }, () => new CountingAdapter(endsOnAbort));
  const changes: string[] = [];
  const list = adapters.map(
    (adapter, i) =>
      new IngestWorker({
        workerId: `w${i}`,
        adapters: new Map([['k', adapter]]),
        demand,
        leases,
        writer,
        leaseTtlMs: 3_000,
        tickMs: 1_000,
        graceMs: 5_000,
        log: silent,
        now,
        events: {
          leaseChanged: (key, change) => changes.push(`w${i} ${change}`),
          runEnded: (key, end) => changes.push(`w${i} ended ${end.reason}`),
        },
      }),
  );
  return { workers: list, adapters, demand, writer, changes, advance: (ms: number) => (clock += ms) };
}

describe('IngestWorker', () => {
  it('runs a demanded key on exactly one of several workers', async () => {
    const f = fleet(3);
    f.demand.keys.add('k');
    for (const w of f.workers) await w.tick();
    expect(f.adapters.map((a) => a.starts)).toEqual([1, 0, 0]);
    for (const w of f.workers) await w.tick();
    expect(f.adapters.map((a) => a.starts)).toEqual([1, 0, 0]);
  });

  it('keeps the subscription through the grace period, then stops and releases', async () => {
    const f = fleet(1);
    const [w] = f.workers;
    f.demand.keys.add('k');
    await w?.tick();
    f.demand.keys.clear();
    for (let i = 0; i < 5; i++) {
      f.advance(1_000);
      await w?.tick();
    }
    expect(f.adapters[0]?.stops).toBe(0);
    f.advance(1_000);
    await w?.tick();
    expect(f.adapters[0]?.stops).toBe(1);
    expect(w?.ownedKeys).toEqual([]);
  });

  it('hands the key to another worker when the owner stops renewing, and fences the old owner', async () => {
    const f = fleet(2);
    const [a, b] = f.workers;
    f.demand.keys.add('k');
    await a?.tick();
    await b?.tick();
    const oldCtx = f.adapters[0]?.contexts[0];
    // a is frozen (no ticks); its lease runs out.
    f.advance(3_500);
    await b?.tick();
    expect(f.adapters[1]?.starts).toBe(1);
    const refused = await oldCtx?.write({ entries: [{ dedupeId: 'x', data: '{}' }] });
    expect(refused).toMatchObject({ ok: false, error: { code: 'fenced' } });
    expect(oldCtx?.signal.aborted).toBe(true);
    const fresh = await f.adapters[1]?.contexts[0]?.write({ entries: [{ dedupeId: 'x', data: '{}' }] });
    expect(fresh).toMatchObject({ ok: true, written: 1 });
    // The frozen owner wakes up: its renewal fails and it stops its run.
    await a?.tick();
    expect(f.adapters[0]?.stops).toBe(1);
  });

  it('reports a run fenced even when its adapter ends on the abort before it sees the refusal', async () => {
    const f = fleet(2, { endsOnAbort: true });
    const [a, b] = f.workers;
    f.demand.keys.add('k');
    await a?.tick();
    f.advance(3_500);
    await b?.tick();
    // The frozen owner wakes with a write in hand, before its next tick's renewal.
    const refused = await f.adapters[0]?.contexts[0]?.write({ entries: [{ dedupeId: 'x', data: '{}' }] });
    expect(refused).toMatchObject({ ok: false, error: { code: 'fenced' } });
    await a?.tick();
    expect(f.changes).toEqual(['w0 acquired', 'w1 acquired', 'w0 ended fenced', 'w0 fenced']);
    expect(a?.ownedKeys).toEqual([]);
  });

  it('says it is shutting down, not that demand ended, when it releases on close', async () => {
    const lines: string[] = [];
    const log = { info: (_: object, msg: string) => lines.push(msg), warn: () => undefined, error: () => undefined };
    const writer = new MemoryStreamWriter();
    const demand = new MemoryDemandSource();
    const worker = new IngestWorker({
      workerId: 'w',
      adapters: new Map([['k', new CountingAdapter()]]),
      demand,
      leases: new MemoryLeaseStore(writer, () => 0),
      writer,
      leaseTtlMs: 3_000,
      tickMs: 1_000,
      graceMs: 5_000,
      log,
      now: () => 0,
    });
    demand.keys.add('k');
    await worker.tick();
    await worker.close();
    expect(lines).toEqual(['lease acquired', 'shutting down; lease released']);
  });

  it('writes an entry once even when it is offered twice', async () => {
    const f = fleet(1);
    f.demand.keys.add('k');
    await f.workers[0]?.tick();
    const ctx = f.adapters[0]?.contexts[0];
    await ctx?.write({ entries: [{ dedupeId: 'a', data: '1' }], stateSet: { cp: '1' } });
    const again = await ctx?.write({
      entries: [
        { dedupeId: 'a', data: '1' },
        { dedupeId: 'b', data: '2' },
      ],
    });
    expect(again).toMatchObject({ ok: true, written: 1, duplicates: 1 });
    expect(f.writer.streams.get('k')?.map((e) => e.data)).toEqual(['1', '2']);
  });

  it('takes nothing new while demand cannot be read', async () => {
    const f = fleet(1);
    f.demand.keys.add('k');
    f.demand.failing = true;
    await f.workers[0]?.tick();
    expect(f.adapters[0]?.starts).toBe(0);
  });

  it('retries a failed key when the adapter says, without growing the backoff', async () => {
    let clock = 0;
    const now = () => clock;
    const writer = new MemoryStreamWriter();
    const leases = new MemoryLeaseStore(writer, now);
    const demand = new MemoryDemandSource();
    let starts = 0;
    const adapter: UpstreamAdapter = {
      kind: 'elsewhere',
      start: () => {
        starts += 1;
        const error = { code: 'upstream_unavailable' as const, retryable: true as const, message: 'served elsewhere' };
        return { ended: Promise.resolve<RunEnd>({ reason: 'failed', error, retryAfterMs: 700 }), stop: () => Promise.resolve() };
      },
    };
    const worker = new IngestWorker({
      workerId: 'w',
      adapters: new Map([['k', adapter]]),
      demand,
      leases,
      writer,
      leaseTtlMs: 3_000,
      tickMs: 100,
      graceMs: 5_000,
      log: silent,
      now,
    });
    demand.keys.add('k');
    const startsAt: number[] = [];
    for (let t = 0; t <= 5_000; t += 100) {
      clock = t;
      const before = starts;
      await worker.tick();
      await Promise.resolve();
      if (starts > before) startsAt.push(t);
    }
    // One start every 700 ms (the next tick after it), ten times in 5 s: a growing backoff would manage three or four.
    expect(startsAt.length).toBeGreaterThanOrEqual(7);
    const gaps = startsAt.slice(1).map((t, i) => t - (startsAt[i] ?? 0));
    expect(Math.max(...gaps)).toBeLessThanOrEqual(800);
  });

  it('renews what it owns before taking anything new in the same pass', async () => {
    let clock = 0;
    const now = () => clock;
    const writer = new MemoryStreamWriter();
    const base = new MemoryLeaseStore(writer, now);
    const order: string[] = [];
    const leases = {
      acquire: (key: string, owner: string, ttl: number) => {
        order.push(`acquire ${key}`);
        return base.acquire(key, owner, ttl);
      },
      renew: (lease: { key: string; token: number }, owner: string, ttl: number) => {
        order.push(`renew ${lease.key}`);
        return base.renew(lease, owner, ttl);
      },
      release: (lease: { key: string; token: number }, owner: string) => base.release(lease, owner),
    };
    const demand = new MemoryDemandSource();
    const adapters = new Map(['a', 'b', 'c'].map((k) => [k, new CountingAdapter()]));
    const worker = new IngestWorker({
      workerId: 'w',
      adapters,
      demand,
      leases,
      writer,
      leaseTtlMs: 3_000,
      tickMs: 1_000,
      graceMs: 5_000,
      log: silent,
      now,
    });
    demand.keys.add('c');
    await worker.tick();
    demand.keys.add('a');
    demand.keys.add('b');
    order.length = 0;
    clock = 1_000;
    await worker.tick();
    expect(order).toEqual(['renew c', 'acquire a', 'acquire b']);
  });

  it('backs off a key whose state cannot be loaded, rather than taking its lease every tick', async () => {
    const f = fleet(1);
    const [w] = f.workers;
    if (w === undefined) throw new Error('one worker');
    let loads = 0;
    f.writer.loadState = () => {
      loads += 1;
      return Promise.reject(new Error('the NATS servers refused the login'));
    };
    f.demand.keys.add('k');
    // Ten ticks at one instant: without a backoff each would take the lease and load again; with
    // it only a full-jitter draw of exactly 0 ms (1 in 1,000 at the first attempts) lets one through.
    for (let i = 0; i < 10; i += 1) await w.tick();
    expect(loads).toBeGreaterThanOrEqual(1);
    expect(loads).toBeLessThan(5);
    const before = loads;
    // The backoff is capped at 30 s.
    f.advance(30_000);
    await w.tick();
    expect(loads).toBe(before + 1);
    expect(f.adapters[0]?.starts).toBe(0);
  });
});

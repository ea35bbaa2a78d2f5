import { describe, expect, it } from 'vitest';
import type { FanoutResult, StepResult } from './fanoutBench.js';
import { kneeBound, kneeBoundCell, pinningSentence, renderKneeBounds } from './renderKnees.js';

function step(over: Partial<StepResult>): StepResult {
  return {
    rate: 100_000,
    eventsPerSecond: 100,
    expected: 150_000,
    received: 150_000,
    deliveredRatio: 1,
    achieved: 100_000,
    p50Ms: 2,
    p99Ms: 20,
    maxMs: 30,
    serverCpu: 0.95,
    redisCpu: 0.1,
    loadCpu: 0.5,
    publisherCpu: 0.2,
    wallSeconds: 1.5,
    serverUsPerDelivery: 10,
    pass: true,
    ...over,
  };
}

function fanout(knee: StepResult | null): FanoutResult {
  return {
    workload: '1 stream × 1k',
    clients: 1_000,
    openFailed: 0,
    steps: knee === null ? [] : [knee],
    knee,
    kneeFail: null,
    kneeIsLowerBound: true,
    clientBound: null,
    halfKnee: null,
    fixed: null,
  };
}

describe('kneeBound', () => {
  it("splits the server's own CPU per delivery from its Redis's, and sums the client side", () => {
    const b = kneeBound(step({}));
    expect(b.bound).toBe('server');
    // 0.95 of a core for 1.5 s over 150,000 deliveries.
    expect(b.serverUsPerDelivery).toBeCloseTo(9.5);
    expect(b.deliveriesPerCpuSecond).toBeCloseTo(150_000 / (0.95 * 1.5));
    expect(b.clientCores).toBeCloseTo(0.8);
  });

  it('has no per-delivery figures for a run that did not record its wall time', () => {
    const b = kneeBound(step({ wallSeconds: undefined }));
    expect(b.serverUsPerDelivery).toBeNull();
    expect(b.deliveriesPerCpuSecond).toBeNull();
  });
});

describe('kneeBoundCell', () => {
  it('names a server-bound knee with its cost per delivery', () => {
    expect(kneeBoundCell(fanout(step({})))).toBe('server-bound at 100k/s (server 95%, 9.50 µs/delivery)');
  });

  it("names a client-bound knee with the client side's CPU and the server's deliveries per CPU-second", () => {
    const cell = kneeBoundCell(fanout(step({ serverCpu: 0.5, loadCpu: 0.7 })));
    expect(cell).toBe('client-bound at 100k/s (server 50%, client side 100%, 5.00 µs/delivery; 200k deliveries per server CPU-second)');
  });

  it('says when neither side had its cores full', () => {
    const cell = kneeBoundCell(fanout(step({ serverCpu: 0.08, redisCpu: 0.01, loadCpu: 0.06, publisherCpu: 0.05 })));
    expect(cell).toMatch(/^client-bound at 100k\/s \(server 8%, client side 12% — neither side had its cores full/);
    // Two client cores at 120% together are not full either.
    expect(kneeBoundCell(fanout(step({ serverCpu: 0.5, loadCpu: 0.7 })), 2)).toContain('neither side');
  });

  it('shows a dash without a knee', () => {
    expect(kneeBoundCell(fanout(null))).toBe('—');
    expect(kneeBoundCell(undefined)).toBe('—');
  });
});

describe('renderKneeBounds', () => {
  it('says how the run was pinned above one row per workload', () => {
    const lines = renderKneeBounds(
      { pinned: true, plan: { serverCpus: '0', clientCpus: '1' } },
      ['1 stream × 1k'],
      [{ label: 'relay', result: () => fanout(step({})) }],
    );
    expect(lines.join('\n')).toContain(
      'the server under test on cpu 0; the load generator, the publisher (this orchestrator) and Redis on cpu 1',
    );
    expect(lines).toContain('| 1 stream × 1k | server-bound at 100k/s (server 95%, 9.50 µs/delivery) |');
  });

  it('warns that an unpinned or unrecorded run gives weak verdicts, and renders nothing without workloads', () => {
    expect(pinningSentence({ pinned: false, reason: 'BENCH_PIN=off' })).toMatch(/^Not pinned \(BENCH_PIN=off\)/);
    expect(pinningSentence(undefined)).toMatch(/weak/);
    expect(renderKneeBounds(undefined, [], [])).toEqual([]);
  });
});

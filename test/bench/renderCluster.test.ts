import { describe, expect, it } from 'vitest';
import type { ClusterKnee, ClusterRun } from './clusterBench.js';
import { clientCores, entryCosts } from './clusterBench.js';
import type { StepResult } from './fanoutBench.js';
import { renderClusterMarkdown } from './renderCluster.js';
import type { ClusterReport } from './renderCluster.js';
import { parseBenchEnv } from './scale.js';

/** A 5 s step that delivered 5,000 entries with these cores busy. */
function step(rate: number, relay: number, primaries: number, replicas: number, pass = true): StepResult {
  return {
    rate,
    eventsPerSecond: rate,
    expected: 5_000,
    received: 5_000,
    deliveredRatio: 1,
    achieved: rate,
    p50Ms: 2,
    p99Ms: 30,
    maxMs: 40,
    serverCpu: relay,
    redisCpu: 0,
    loadCpu: 0.2,
    publisherCpu: 0.1,
    wallSeconds: 5,
    groupCpu: { primaries, replicas },
    serverUsPerDelivery: 0,
    pass,
  };
}

function run(target: 'single' | 'cluster', s: StepResult): ClusterRun {
  return {
    target,
    workload: '10,000 streams × 1 at 1k/s',
    streams: 10_000,
    eventsPerSecond: 1_000,
    sockets: 1_000,
    skipped: null,
    openFailed: 0,
    step: s,
    ...entryCosts(s),
  };
}

function knee(target: 'single' | 'cluster', pass: StepResult, fail: StepResult): ClusterKnee {
  return {
    target,
    streams: 10_000,
    skipped: null,
    steps: [pass, fail],
    knee: pass,
    kneeFail: fail,
    bound: pass.serverCpu >= 0.9 ? 'server' : 'client',
    clientCores: clientCores(pass),
    costs: entryCosts(pass),
  };
}

const report = (runs: ClusterRun[], throughput: ClusterKnee[]): ClusterReport => ({
  startedAt: '2026-12-01T16:00:00.000Z',
  durationS: 100,
  scale: 'full',
  machine: { cores: 2, model: 'test', node: 'v20', loadAverageAtStart: 0.1, loadAverageAtEnd: 0.2 },
  pinning: { pinned: true, plan: { serverCpus: '0', clientCpus: '1' } },
  config: parseBenchEnv({}).scale.cluster,
  cluster: { primaries: 3, replicasPerPrimary: 1, runs, throughput },
});

describe('cluster-results.md', () => {
  it('gives Redis CPU per entry over the primaries and the replicas apart, and cluster ÷ one Redis', () => {
    // 0.06 cores over 5 s for 5,000 entries = 60 µs per entry.
    const single = run('single', step(1_000, 0.2, 0.06, 0));
    const cluster = run('cluster', step(1_000, 0.25, 0.09, 0.03));
    expect([cluster.primariesUsPerEntry, cluster.replicasUsPerEntry, cluster.relayUsPerEntry].map((v) => v?.toFixed(1))).toEqual([
      '90.0',
      '30.0',
      '250.0',
    ]);
    expect(single.replicasUsPerEntry).toBeNull();
    const md = renderClusterMarkdown(report([single, cluster], []));
    expect(md).toContain('| 10,000 streams × 1 at 1k/s | one Redis | 100.00% | 2.0 / 30.0 | 60.0 | — | 60.0 | 200.0 |');
    expect(md).toContain('| 10,000 streams × 1 at 1k/s | cluster (3 primaries) | 100.00% | 2.0 / 30.0 | 90.0 | 30.0 | 120.0 | 250.0 |');
    expect(md).toContain('| 10,000 streams × 1 at 1k/s | cluster ÷ one Redis | | | 1.50× |  | 2.00× | 1.25× |');
  });

  it('compares replicas with replicas when the one Redis feeds one too', () => {
    const single = run('single', step(1_000, 0.2, 0.06, 0.02));
    const cluster = run('cluster', step(1_000, 0.25, 0.09, 0.03));
    const md = renderClusterMarkdown(report([single, cluster], []));
    expect(md).toContain('| 10,000 streams × 1 at 1k/s | one Redis | 100.00% | 2.0 / 30.0 | 60.0 | 20.0 | 80.0 | 200.0 |');
    expect(md).toContain('| 10,000 streams × 1 at 1k/s | cluster ÷ one Redis | | | 1.50× | 1.50× | 1.50× | 1.25× |');
  });

  it('gives deliveries/s at the knee with what limited it, and the ratio of the knees', () => {
    const single = knee('single', step(40_000, 0.95, 0.3, 0), step(45_000, 0.97, 0.3, 0, false));
    const cluster = knee('cluster', step(30_000, 0.5, 0.4, 0.2), step(34_000, 0.5, 0.4, 0.2, false));
    const md = renderClusterMarkdown(report([], [single, cluster]));
    expect(md).toMatch(/\| one Redis \| 40k–45k \| the relay: relay 95%, client side 60% \|/);
    // 0.4 + 0.2 Redis + 0.2 load + 0.1 publisher: the client side's core was full.
    expect(md).toMatch(
      /\| cluster \(3 primaries\) \| 30k–34k \| the client side \(Redis, load generator, publisher\): relay 50%, client side 90% \|/,
    );
    expect(md).toContain('| cluster ÷ one Redis | 0.75× |');
  });
});

describe('BENCH_PARTS=cluster', () => {
  it('runs only when asked for, on the 10,000-stream task workloads, with a replica per primary unless BENCH_CLUSTER_REPLICAS=0', () => {
    expect(parseBenchEnv({}).parts.has('cluster')).toBe(false);
    const o = parseBenchEnv({ BENCH_PARTS: 'cluster' });
    expect([...o.parts]).toEqual(['cluster']);
    expect(o.scale.cluster.workloads.map((w) => w.name)).toEqual(['10,000 streams × 1 at 1k/s', '10,000 streams × 1 at 10k/s']);
    expect([o.scale.cluster.primaries, o.scale.cluster.replicasPerPrimary]).toEqual([3, 1]);
    expect(parseBenchEnv({ BENCH_PARTS: 'cluster', BENCH_CLUSTER_REPLICAS: '0' }).scale.cluster.replicasPerPrimary).toBe(0);
    expect(() => parseBenchEnv({ BENCH_CLUSTER_REPLICAS: '2' })).toThrow(/BENCH_CLUSTER_REPLICAS=0\|1/);
  });
});

import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClusterKnee, ClusterResults, ClusterRun, ClusterTargetKind, EntryCosts } from './clusterBench.js';
import { fmtRate } from './fanoutBench.js';
import { SERVER_BOUND_CPU } from './pinning.js';
import type { Pinning } from './pinning.js';
import type { ClusterScale } from './scale.js';

/** What `BENCH_PARTS=cluster` writes: cluster-results.json holds this, cluster-results.md renders it. */
export interface ClusterReport {
  readonly startedAt: string;
  readonly durationS: number;
  readonly scale: string;
  readonly machine: { cores: number; model: string; node: string; loadAverageAtStart: number; loadAverageAtEnd: number };
  readonly pinning: Pinning;
  /** The workloads, rates, step lengths and cluster shape this run used. */
  readonly config: ClusterScale;
  readonly cluster: ClusterResults;
}

const fmtUs = (v: number | null | undefined): string => (v === null || v === undefined ? '—' : v.toFixed(1));

/** `a ÷ b` as `1.23×`, or — when either is missing or b is 0. */
export function ratioCell(a: number | null | undefined, b: number | null | undefined): string {
  if (a === null || a === undefined || b === null || b === undefined || b === 0) return '—';
  return `${(a / b).toFixed(2)}×`;
}

const sum = (a: number | null, b: number | null): number | null => (a === null ? null : a + (b ?? 0));

function costCells(c: EntryCosts | null): string[] {
  if (c === null) return ['—', '—', '—', '—'];
  return [
    fmtUs(c.primariesUsPerEntry),
    fmtUs(c.replicasUsPerEntry),
    fmtUs(sum(c.primariesUsPerEntry, c.replicasUsPerEntry)),
    fmtUs(c.relayUsPerEntry),
  ];
}

function ratioCells(cluster: EntryCosts | null, single: EntryCosts | null): string[] {
  return [
    ratioCell(cluster?.primariesUsPerEntry, single?.primariesUsPerEntry),
    // The one Redis feeds replicas too when the cluster's primaries do: each side's own sum.
    single?.replicasUsPerEntry === null || single?.replicasUsPerEntry === undefined
      ? ''
      : ratioCell(cluster?.replicasUsPerEntry, single.replicasUsPerEntry),
    ratioCell(
      sum(cluster?.primariesUsPerEntry ?? null, cluster?.replicasUsPerEntry ?? null),
      sum(single?.primariesUsPerEntry ?? null, single?.replicasUsPerEntry ?? null),
    ),
    ratioCell(cluster?.relayUsPerEntry, single?.relayUsPerEntry),
  ];
}

function kneeCell(k: ClusterKnee | undefined): string {
  if (k === undefined) return '—';
  if (k.skipped !== null) return `not run: ${k.skipped}`;
  if (k.knee === null) return `< ${fmtRate(Math.min(...k.steps.map((s) => s.rate)))}`;
  return k.kneeFail === null ? `≥ ${fmtRate(k.knee.rate)}` : `${fmtRate(k.knee.rate)}–${fmtRate(k.kneeFail.rate)}`;
}

function limitCell(k: ClusterKnee | undefined, pinned: boolean): string {
  if (k?.knee === null || k?.knee === undefined) return '—';
  const relay = `relay ${(k.knee.serverCpu * 100).toFixed(0)}%`;
  const client = `client side ${((k.clientCores ?? 0) * 100).toFixed(0)}%`;
  const clientFull = (k.clientCores ?? 0) >= SERVER_BOUND_CPU;
  const verdict =
    k.bound === 'server'
      ? 'the relay'
      : clientFull
        ? 'the client side (Redis, load generator, publisher)'
        : 'neither core full: other load on the machine, or latency';
  return `${verdict}${pinned ? '' : ' (unpinned)'}: ${relay}, ${client}`;
}

export function renderClusterMarkdown(r: ClusterReport): string {
  const c = r.cluster;
  const pinned = r.pinning.pinned;
  const lines: string[] = [];
  lines.push(
    `Run ${r.startedAt}, scale \`${r.scale}\`, ${r.durationS.toFixed(0)} s; ${r.machine.cores} cores (${r.machine.model}), Node ${r.machine.node}; ` +
      `load average ${r.machine.loadAverageAtStart.toFixed(2)} at start, ${r.machine.loadAverageAtEnd.toFixed(2)} at end.`,
  );
  lines.push('');
  lines.push(
    r.pinning.pinned
      ? `Pinned: the relay on cpu ${r.pinning.plan.serverCpus}; load generator, publisher and every Redis process on cpu ${r.pinning.plan.clientCpus}.`
      : `Not pinned: ${r.pinning.reason}.`,
  );
  lines.push('');
  const replicas = c.replicasPerPrimary === 0 ? 'no replicas' : `${c.replicasPerPrimary} replica per primary`;
  const singleReplicas = c.replicasPerPrimary === 0 ? 'no replica' : `${c.replicasPerPrimary} replica, like each primary`;
  lines.push(
    `**One Redis (${singleReplicas}) vs a Redis Cluster of ${c.primaries} primaries (${replicas}), same workload, same run.** One relay reading on keyspace ` +
      'notifications (`Kt` on every node), a fresh relay per measurement, one subscriber per stream (10 per socket), round-robin ' +
      'publishing at a fixed total rate after a 1 s warm-up. CPU µs per delivered entry: Redis summed over the primaries (the one Redis), ' +
      'XADDs included; replicas summed separately; the relay. Ratios: cluster ÷ one Redis.',
  );
  lines.push('');
  lines.push(
    '| workload | target | delivered | p50 / p99 ms | Redis primaries µs/entry | replicas µs/entry | all nodes µs/entry | relay µs/entry |',
  );
  lines.push('| --- | --- | --- | --- | --- | --- | --- | --- |');
  const workloads = [...new Set(c.runs.map((x) => x.workload))];
  const run = (w: string, t: ClusterTargetKind): ClusterRun | undefined => c.runs.find((x) => x.workload === w && x.target === t);
  for (const w of workloads) {
    const single = run(w, 'single');
    const cluster = run(w, 'cluster');
    for (const [label, x] of [
      ['one Redis', single],
      [`cluster (${c.primaries} primaries)`, cluster],
    ] as const) {
      if (x === undefined) continue;
      if (x.step === null) {
        lines.push(`| ${w} | ${label} | not run: ${x.skipped ?? 'unknown'} | | | | | |`);
        continue;
      }
      const s = x.step;
      lines.push(
        `| ${w} | ${label} | ${(s.deliveredRatio * 100).toFixed(2)}% | ${s.p50Ms.toFixed(1)} / ${s.p99Ms.toFixed(1)} | ${costCells(x).join(' | ')} |`,
      );
    }
    lines.push(`| ${w} | cluster ÷ one Redis | | | ${ratioCells(cluster ?? null, single ?? null).join(' | ')} |`);
  }
  lines.push('');
  const knee = (t: ClusterTargetKind): ClusterKnee | undefined => c.throughput.find((k) => k.target === t);
  const [ks, kc] = [knee('single'), knee('cluster')];
  if (ks !== undefined || kc !== undefined) {
    lines.push(
      `**Throughput: deliveries/s at the knee** on ${((ks ?? kc)?.streams ?? 0).toLocaleString('en-US')} streams × 1 (highest offered rate with p99 < 100 ms and ≥ 99.9% ` +
        'delivered – lowest failing rate above it; the knee lies between). Limited by: the relay when its core was ≥ 90% busy, the ' +
        'client side when its core (every Redis process, the load generator and the publisher) was, else neither.',
    );
    lines.push('');
    lines.push(
      '| target | deliveries/s at the knee | limited by | Redis primaries µs/entry | replicas µs/entry | all nodes µs/entry | relay µs/entry |',
    );
    lines.push('| --- | --- | --- | --- | --- | --- | --- |');
    lines.push(`| one Redis | ${kneeCell(ks)} | ${limitCell(ks, pinned)} | ${costCells(ks?.costs ?? null).join(' | ')} |`);
    lines.push(
      `| cluster (${c.primaries} primaries) | ${kneeCell(kc)} | ${limitCell(kc, pinned)} | ${costCells(kc?.costs ?? null).join(' | ')} |`,
    );
    lines.push(
      `| cluster ÷ one Redis | ${ratioCell(kc?.knee?.rate, ks?.knee?.rate)} | | ${ratioCells(kc?.costs ?? null, ks?.costs ?? null).join(' | ')} |`,
    );
    lines.push('');
  }
  return `${lines.join('\n')}\n`;
}

/** Writes cluster-results.md and cluster-results.json into `dir`; returns their paths. */
export function writeClusterReport(r: ClusterReport, dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  const md = join(dir, 'cluster-results.md');
  const json = join(dir, 'cluster-results.json');
  writeFileSync(md, renderClusterMarkdown(r));
  writeFileSync(json, `${JSON.stringify(r, null, 2)}\n`);
  return [md, json];
}

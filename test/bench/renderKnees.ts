import type { FanoutResult, StepResult } from './fanoutBench.js';
import { fmtRate } from './fanoutBench.js';
import { classifyBound, deliveriesPerCpuSecond, SERVER_BOUND_CPU, usPer } from './pinning.js';
import type { Bound, Pinning } from './pinning.js';

/** What limited one knee, and what a delivery cost the server there. */
export interface KneeBound {
  readonly bound: Bound;
  /** The server's share of its core at the knee. */
  readonly serverCores: number;
  /** Everything else measured (Redis, load workers, publisher): the client side's cores. */
  readonly clientCores: number;
  /** Server CPU µs per delivery at the knee (its Redis not included); null for runs without wall time. */
  readonly serverUsPerDelivery: number | null;
  /** Deliveries per CPU-second of the server at the knee: the sizing figure when the client side was the limit. */
  readonly deliveriesPerCpuSecond: number | null;
}

export function kneeBound(knee: StepResult): KneeBound {
  const wall = knee.wallSeconds;
  return {
    bound: classifyBound(knee.serverCpu),
    serverCores: knee.serverCpu,
    clientCores: knee.redisCpu + knee.loadCpu + (knee.publisherCpu ?? 0),
    serverUsPerDelivery: wall === undefined ? null : usPer(knee.serverCpu, wall, knee.received),
    deliveriesPerCpuSecond: wall === undefined ? null : deliveriesPerCpuSecond(knee.serverCpu, wall, knee.received),
  };
}

/**
 * One table cell: the verdict, both sides' CPU, and the server's cost per delivery at the knee.
 * A client-bound knee where the client side's cores were not full either was limited by neither
 * side's CPU (other load on the machine, or latency): the cell says so rather than blame the client.
 */
export function kneeBoundCell(r: FanoutResult | undefined, clientCpuCount = 1): string {
  if (r?.knee === null || r?.knee === undefined) return '—';
  const b = kneeBound(r.knee);
  const pct = (v: number): string => `${(v * 100).toFixed(0)}%`;
  const cost = b.serverUsPerDelivery === null ? '' : `, ${b.serverUsPerDelivery.toFixed(2)} µs/delivery`;
  if (b.bound === 'server') return `server-bound at ${fmtRate(r.knee.rate)}/s (server ${pct(b.serverCores)}${cost})`;
  const perCpu = b.deliveriesPerCpuSecond === null ? '' : `; ${fmtRate(b.deliveriesPerCpuSecond)} deliveries per server CPU-second`;
  const neither =
    b.clientCores < SERVER_BOUND_CPU * clientCpuCount
      ? ' — neither side had its cores full: other load on the machine, or latency, limited it'
      : '';
  return `client-bound at ${fmtRate(r.knee.rate)}/s (server ${pct(b.serverCores)}, client side ${pct(b.clientCores)}${neither}${cost}${perCpu})`;
}

/** The pinning a run had, in one sentence for the report. */
export function pinningSentence(p: Pinning | undefined): string {
  if (p === undefined) return 'This run did not record its pinning (it predates it): the verdicts below are weak.';
  if (!p.pinned)
    return (
      `Not pinned (${p.reason}): the server and the load generator shared the cores, so a server below ` +
      `${SERVER_BOUND_CPU * 100}% of a core may have been starved by the client side as much as limited by it.`
    );
  return (
    `Pinned with taskset: the server under test on cpu ${p.plan.serverCpus}; the load generator, the publisher ` +
    `(this orchestrator) and Redis on cpu ${p.plan.clientCpus}. A knee with the server's core at ≥ ${SERVER_BOUND_CPU * 100}% ` +
    'is server-bound; any other is client-bound: the client side (load generator, publisher or Redis) ran out first, ' +
    "and the server's deliveries per CPU-second are what sizing a fleet needs."
  );
}

/** The knee table's verdict section: one row per workload, one column per server. */
export function renderKneeBounds(
  pinning: Pinning | undefined,
  workloads: readonly string[],
  columns: readonly { readonly label: string; readonly result: (workload: string) => FanoutResult | undefined }[],
): string[] {
  if (workloads.length === 0) return [];
  const lines: string[] = [];
  lines.push('**What limited each knee, and the server CPU per delivery there** (server only, its Redis not included)');
  lines.push('');
  lines.push(pinningSentence(pinning));
  lines.push('');
  lines.push(`| workload | ${columns.map((c) => c.label).join(' | ')} |`);
  lines.push(`| --- | ${columns.map(() => '---').join(' | ')} |`);
  const clientCpuCount = pinning?.pinned === true ? pinning.plan.clientCpus.split(',').length : 1;
  for (const w of workloads) lines.push(`| ${w} | ${columns.map((c) => kneeBoundCell(c.result(w), clientCpuCount)).join(' | ')} |`);
  lines.push('');
  return lines;
}

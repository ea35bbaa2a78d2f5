import type { RelayDrainOutcome, RelaySnapshot } from '@streamgate/ops';

type Drain = NonNullable<RelaySnapshot['drain']>;

export interface DrainPoint {
  /** Snapshot time, ms since the epoch. */
  readonly at: number;
  readonly connections: number;
}

/** One drain of one relay process as its snapshots reported it, kept after the pod is gone. */
export interface DrainTrace {
  readonly startedAt: number;
  readonly windowMs: number;
  readonly connectionsAtStart: number;
  /** How it ended, from the relay's last snapshot; null while it runs (or if that snapshot never came). */
  readonly outcome: RelayDrainOutcome | null;
  readonly points: readonly DrainPoint[];
}

/** More than a drain window's worth at one snapshot a second; a longer trace keeps its newest points. */
const MAX_POINTS = 600;

/**
 * The uniform schedule the relay promises: each connection is told to reconnect at a uniform
 * random time in [0, windowMs), so the expected connections left at `at` fall linearly to 0.
 */
export function scheduleLeft(trace: Pick<DrainTrace, 'startedAt' | 'windowMs' | 'connectionsAtStart'>, at: number): number {
  const elapsed = Math.min(Math.max(at - trace.startedAt, 0), trace.windowMs);
  return trace.connectionsAtStart * (1 - elapsed / trace.windowMs);
}

/** The trace after one more snapshot: a drain with another start begins a new trace. */
export function extendDrainTrace(trace: DrainTrace | undefined, drain: Drain, point: DrainPoint): DrainTrace {
  const same = trace !== undefined && trace.startedAt === drain.startedAt;
  const points = same ? [...trace.points, point].slice(-MAX_POINTS) : [point];
  return {
    startedAt: drain.startedAt,
    windowMs: drain.windowMs,
    connectionsAtStart: drain.connectionsAtStart,
    outcome: drain.outcome,
    points,
  };
}

export interface DrainChartData {
  /** Seconds since the drain started. */
  readonly x: number[];
  readonly schedule: number[];
  readonly actual: (number | null)[];
}

/** The two lines of a drain chart on one x axis: the schedule at every x, the real count where measured. */
export function drainChartData(trace: DrainTrace): DrainChartData {
  const measured = new Map<number, number>();
  measured.set(0, trace.connectionsAtStart);
  for (const p of trace.points) measured.set(Math.max(p.at - trace.startedAt, 0) / 1000, p.connections);
  const windowEnd = trace.windowMs / 1000;
  const xs = [...new Set([0, windowEnd, ...measured.keys()])].sort((a, b) => a - b);
  return {
    x: xs,
    schedule: xs.map((s) => scheduleLeft(trace, trace.startedAt + s * 1000)),
    actual: xs.map((s) => measured.get(s) ?? null),
  };
}

import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { renderMarkdown, writeReport } from './report.js';
import type { BenchResults } from './report.js';
import { parseBenchEnv } from './scale.js';
import type { FanoutResult, StepResult } from './fanoutBench.js';
import type { TaskResult } from './tasksBench.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function run(tasks: TaskResult[]): BenchResults {
  return {
    scale: 'quick',
    startedAt: '2026-12-01T00:00:00.000Z',
    durationS: 20,
    machine: { cores: 2, model: 'test', node: 'v20', loadAverageAtStart: 0, loadAverageAtEnd: 0 },
    scaleConfig: parseBenchEnv({ BENCH_SCALE: 'quick' }).scale,
    socketioDefaults: null,
    servers: {},
    pinning: { pinned: false, reason: 'BENCH_PIN=off' },
    tasks,
  };
}

const skipped: TaskResult = {
  series: 'wsrelay',
  workload: '50,000 streams × 1 at 1k/s',
  streams: 50_000,
  eventsPerSecond: 1_000,
  sockets: 5_000,
  skipped: 'too many descriptors',
  openFailed: 0,
  step: null,
  redisUsPerEntry: null,
  serverUsPerEntry: null,
};

describe('writeReport', () => {
  it('writes the task chart and no fan-out chart for a run of the task workloads alone', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-report-'));
    dirs.push(dir);
    const files = writeReport(run([skipped]), dir);
    expect(files.map((f) => f.slice(dir.length + 1))).toEqual(['results.md', 'results.json', 'tasks.svg']);
    expect(existsSync(join(dir, 'chart.svg'))).toBe(false);
    const md = readFileSync(join(dir, 'results.md'), 'utf8');
    expect(md).not.toContain('Deliveries/s at the knee');
    expect(md).toContain('not run: too many descriptors');
  });

  it('writes no task chart for a run without task workloads', () => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-report-'));
    dirs.push(dir);
    expect(writeReport(run([]), dir).map((f) => f.slice(dir.length + 1))).toEqual(['results.md', 'results.json']);
  });
});

function fixedAt(usPerDelivery: number): FanoutResult {
  const step: StepResult = {
    rate: 25_000,
    eventsPerSecond: 2_500,
    expected: 1,
    received: 1,
    deliveredRatio: 1,
    achieved: 25_000,
    p50Ms: 1,
    p99Ms: 2,
    maxMs: 3,
    serverCpu: 0.5,
    redisCpu: 0.1,
    loadCpu: 0.5,
    serverUsPerDelivery: usPerDelivery,
    pass: true,
  };
  return {
    workload: '100 streams × 10',
    clients: 1_000,
    openFailed: 0,
    steps: [step],
    knee: step,
    kneeIsLowerBound: true,
    clientBound: false,
    halfKnee: null,
    fixed: step,
  };
}

describe('renderMarkdown, fan-out cost per delivery', () => {
  const servers = (floor: boolean): BenchResults['servers'] => ({
    relay: { fanout: [fixedAt(16)], memory: null, storm: null },
    socketio: { fanout: [fixedAt(24)], memory: null, storm: null },
    uws: { fanout: [fixedAt(8)], memory: null, storm: null },
    ...(floor ? { uwsfloor: { fanout: [fixedAt(12)], memory: null, storm: null } } : {}),
  });

  it('weighs Socket.IO and the relay against the floor of the live path when it ran', () => {
    const md = renderMarkdown({ ...run([]), servers: servers(true) });
    expect(md).toContain('| Socket.IO ÷ relay | uWS ÷ relay | Socket.IO ÷ floor | relay ÷ floor |');
    expect(md).toContain('| 100 streams × 10 | 16.00 | 24.00 | 8.00 | 12.00 | 1.50× | 0.50× | 2.00× | 1.33× |');
  });

  it('has no floor columns without the floor', () => {
    const md = renderMarkdown({ ...run([]), servers: servers(false) });
    expect(md).not.toContain('÷ floor');
    expect(md).toContain('| 100 streams × 10 | 16.00 | 24.00 | 8.00 | 1.50× | 0.50× |');
  });
});

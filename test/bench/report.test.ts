import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { writeReport } from './report.js';
import type { BenchResults } from './report.js';
import { parseBenchEnv } from './scale.js';
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

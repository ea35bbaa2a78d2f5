import { describe, expect, it } from 'vitest';
import { DemandReporter } from './DemandReporter.js';

describe('DemandReporter', () => {
  it('reports only ingest-backed streams with subscribers, once per target, and survives a failing target', async () => {
    const beats: { target: string; streams: readonly string[]; ttlMs: number }[] = [];
    const errors: string[] = [];
    const reporter = new DemandReporter({
      prefixes: ['evm:'],
      intervalMs: 60_000,
      ttlMs: 15_000,
      onError: (target) => errors.push(target),
      targets: [
        {
          target: 'a',
          streams: () => ['evm:eth:heads', 'demo:x', 'evm:eth:logs'],
          sink: { heartbeat: (streams, ttlMs) => Promise.resolve(void beats.push({ target: 'a', streams, ttlMs })) },
        },
        { target: 'b', streams: () => ['evm:other'], sink: { heartbeat: () => Promise.reject(new Error('down')) } },
        {
          target: 'c',
          streams: () => ['demo:only'],
          sink: { heartbeat: (streams, ttlMs) => Promise.resolve(void beats.push({ target: 'c', streams, ttlMs })) },
        },
      ],
    });
    await reporter.report();
    reporter.close();
    expect(beats.filter((b) => b.target === 'a').at(-1)).toEqual({
      target: 'a',
      streams: ['evm:eth:heads', 'evm:eth:logs'],
      ttlMs: 15_000,
    });
    expect(beats.some((b) => b.target === 'c')).toBe(false);
    expect(errors).toContain('b');
  });

  it('tells onReport how many streams each heartbeat carried, 0 when it sent none, and nothing for a failed one', async () => {
    const reports: [string, number][] = [];
    const reporter = new DemandReporter({
      prefixes: ['evm:'],
      intervalMs: 60_000,
      ttlMs: 15_000,
      onError: () => undefined,
      onReport: (target, streams) => reports.push([target, streams]),
      targets: [
        { target: 'a', streams: () => ['evm:1', 'evm:2', 'demo:3'], sink: { heartbeat: () => Promise.resolve() } },
        { target: 'b', streams: () => ['demo:only'], sink: { heartbeat: () => Promise.resolve() } },
        { target: 'c', streams: () => ['evm:c'], sink: { heartbeat: () => Promise.reject(new Error('down')) } },
      ],
    });
    await reporter.report();
    reporter.close();
    // The constructor's own first round ran too: every report is one of these two.
    expect(new Set(reports.map((r) => r.join(' ')))).toEqual(new Set(['a 2', 'b 0']));
    expect(reports.some(([target]) => target === 'c')).toBe(false);
  });
});

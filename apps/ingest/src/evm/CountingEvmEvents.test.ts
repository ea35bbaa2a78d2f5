import { describe, expect, it } from 'vitest';
import { CountingEvmEvents } from './CountingEvmEvents.js';
import type { EvmRunEvents } from './evmEvents.js';

function recorder(): { events: EvmRunEvents; calls: string[] } {
  const calls: string[] = [];
  const record =
    (name: string) =>
    (...args: unknown[]) =>
      void calls.push(`${name}(${args.map(String).join(',')})`);
  return {
    calls,
    events: {
      failover: record('failover'),
      failback: record('failback'),
      backfill: record('backfill'),
      degraded: record('degraded'),
      gap: record('gap'),
      reorg: record('reorg'),
      dedupeHits: record('dedupeHits'),
      written: record('written'),
      providerError: record('providerError'),
      stateChanged: record('stateChanged'),
    },
  };
}

describe('CountingEvmEvents', () => {
  it('counts failovers (those that found no provider too), gaps and reorgs, from zero', () => {
    const { events } = recorder();
    const counting = new CountingEvmEvents(events);
    expect(counting.counts).toEqual({ failovers: 0, gaps: 0, reorgs: 0 });
    counting.failover('s', 'a', 'b', 10, 'closed');
    counting.failover('s', 'b', null, 10, 'closed');
    counting.gap('s', 1, 5, 'best_effort');
    counting.reorg('s', 2);
    counting.reorg('s', 1);
    counting.reorg('s', 3);
    counting.written('s', 4);
    counting.stateChanged('s', 'active');
    expect(counting.counts).toEqual({ failovers: 2, gaps: 1, reorgs: 3 });
  });

  it('passes every event on unchanged, in order', () => {
    const { events, calls } = recorder();
    const counting = new CountingEvmEvents(events);
    counting.failover('s', 'a', 'b', 12, 'why');
    counting.backfill('s', 3, 1.5, 2.5);
    counting.degraded('s', true);
    counting.gap('s', 1, 2, 'strict');
    counting.reorg('s', 4);
    counting.dedupeHits('s', 'log', 2);
    counting.written('s', 7);
    counting.providerError('p0', 'garbage', 'not JSON');
    counting.stateChanged('s', 'switching');
    expect(calls).toEqual([
      'failover(s,a,b,12,why)',
      'backfill(s,3,1.5,2.5)',
      'degraded(s,true)',
      'gap(s,1,2,strict)',
      'reorg(s,4)',
      'dedupeHits(s,log,2)',
      'written(s,7)',
      'providerError(p0,garbage,not JSON)',
      'stateChanged(s,switching)',
    ]);
  });
});

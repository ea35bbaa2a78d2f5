import { describe, expect, it } from 'vitest';
import { alignSeries } from './alignSeries.js';

describe('alignSeries', () => {
  it('puts pods that publish at different phases on one x axis of whole seconds', () => {
    const history = new Map([
      [
        'relay-1',
        [
          { at: 2_010, connections: 5, deliveriesPerSecond: 1 },
          { at: 3_020, connections: 6, deliveriesPerSecond: 2 },
        ],
      ],
      ['relay-0', [{ at: 2_480, connections: 9, deliveriesPerSecond: 3 }]],
    ]);
    expect(alignSeries(history, (p) => p.connections)).toEqual({
      labels: ['relay-0', 'relay-1'],
      data: [
        [2, 3],
        [9, null],
        [5, 6],
      ],
    });
  });
});

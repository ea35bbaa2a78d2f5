import { describe, expect, it } from 'vitest';
import { SharedRequest } from './SharedRequest.js';

describe('SharedRequest', () => {
  it('answers every ask made while a request is out with the next one, sent after them', async () => {
    const sent: Array<(n: number) => void> = [];
    let sends = 0;
    const shared = new SharedRequest(() => {
      sends++;
      return new Promise<number>((resolve) => sent.push(resolve));
    });
    const first = shared.ask();
    const during = [shared.ask(), shared.ask(), shared.ask()];
    expect(sends).toBe(1);
    sent[0]?.(1);
    expect(await first).toBe(1);
    // The asks made while the first was out were not answered by it: a second went out after them.
    await Promise.resolve();
    expect(sends).toBe(2);
    sent[1]?.(2);
    expect(await Promise.all(during)).toEqual([2, 2, 2]);
  });

  it('passes a failure to the asks it was for, and sends again for the next', async () => {
    let n = 0;
    const shared = new SharedRequest(() => (++n === 1 ? Promise.reject(new Error('no leader')) : Promise.resolve(n)));
    await expect(shared.ask()).rejects.toThrow('no leader');
    expect(await shared.ask()).toBe(2);
  });
});

import { describe, expect, it } from 'vitest';
import { RequestGate } from './RequestGate.js';

describe('RequestGate', () => {
  it('keeps at most max requests out and sends the rest in order as slots free', async () => {
    const gate = new RequestGate(2);
    const release: Array<() => void> = [];
    const started: number[] = [];
    let out = 0;
    let most = 0;
    const runs = [0, 1, 2, 3, 4].map((i) =>
      gate.run(async () => {
        started.push(i);
        most = Math.max(most, ++out);
        await new Promise<void>((resolve) => release.push(resolve));
        out--;
        return i;
      }),
    );
    await Promise.resolve();
    expect(started).toEqual([0, 1]);
    while (release.length > 0 || started.length < 5) {
      release.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3, 4]);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(2);
  });

  it('frees the slot of a request that failed', async () => {
    const gate = new RequestGate(1);
    await expect(gate.run(() => Promise.reject(new Error('timeout')))).rejects.toThrow('timeout');
    expect(await gate.run(() => Promise.resolve('next'))).toBe('next');
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => new RequestGate(0)).toThrow(RangeError);
  });
});

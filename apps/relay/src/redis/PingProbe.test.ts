import { describe, expect, it } from 'vitest';
import { PingProbe } from './PingProbe.js';

class FakeNode {
  frozen = false;
  down = false;
  ping(): Promise<unknown> {
    if (this.frozen) return new Promise(() => undefined);
    return this.down ? Promise.reject(new Error('Connection is closed.')) : Promise.resolve('PONG');
  }
}

describe('PingProbe', () => {
  it('answers while any node answers its own PING; a frozen or unreachable node alone does not end it', async () => {
    let now = 0;
    const nodes = [new FakeNode(), new FakeNode(), new FakeNode()];
    const errors: Error[] = [];
    const probe = new PingProbe({ nodes: () => nodes, timeoutMs: 2_000, now: () => now, onError: (e) => errors.push(e) });
    const tick = async (ms: number): Promise<void> => {
      now += ms;
      probe.probe();
      await Promise.resolve();
      await Promise.resolve();
    };
    await tick(0);
    expect(probe.answering).toBe(true);
    nodes[0]!.frozen = true;
    nodes[1]!.down = true;
    for (let i = 0; i < 5; i++) await tick(1_000);
    expect(probe.answering).toBe(true);
    expect(errors.length).toBeGreaterThan(0);
    nodes[2]!.frozen = true;
    for (let i = 0; i < 4; i++) await tick(1_000);
    expect(probe.answering).toBe(false);
    // Node 1's connection is down: when it last answered is not known, so nothing is counted.
    expect(probe.silentForMs).toBe(0);
    // One PING outstanding per node: a stalled one is not sent a pile.
    expect(errors.every((e) => e.message === 'Connection is closed.')).toBe(true);
  });

  it('counts a frozen node silent from the send of its overdue PING', async () => {
    let now = 0;
    const node = new FakeNode();
    const probe = new PingProbe({ nodes: () => [node], timeoutMs: 2_000, now: () => now, onError: () => undefined });
    probe.probe();
    await Promise.resolve();
    expect(probe.silentForMs).toBe(0);
    node.frozen = true;
    now = 1_000;
    probe.probe();
    now = 2_500;
    expect([probe.answering, probe.silentForMs]).toEqual([true, 0]);
    now = 3_200;
    expect([probe.answering, probe.silentForMs]).toEqual([false, 2_200]);
  });

  it('a reply error is an answer; no nodes (slot map unknown) is not', async () => {
    const node = { ping: () => Promise.reject(Object.assign(new Error('LOADING Redis is loading'), { name: 'ReplyError' })) };
    let nodes: Array<typeof node> = [node];
    const probe = new PingProbe({ nodes: () => nodes, timeoutMs: 2_000, now: () => 0, onError: () => undefined });
    probe.probe();
    await Promise.resolve();
    await Promise.resolve();
    expect(probe.answering).toBe(true);
    nodes = [];
    expect(probe.answering).toBe(false);
  });
});

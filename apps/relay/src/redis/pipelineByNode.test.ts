import { describe, expect, it } from 'vitest';
import type { Cluster } from 'ioredis';
import { keySlot } from '@streamgate/redis';
import { NodeDeadlineError, pipelineByNode } from './pipelineByNode.js';
import type { KeyedCall, PipelineReplies } from './pipelineByNode.js';

/** Just what pipelineByNode uses of an ioredis Cluster: two nodes, one of which can be frozen. */
class FakeCluster {
  readonly isCluster = true;
  readonly slots: string[][] = [];
  readonly execs: string[] = [];
  frozen: string | null = null;
  private readonly held: Array<() => void> = [];

  constructor(routes: Record<string, string>) {
    for (const [key, node] of Object.entries(routes)) this.slots[keySlot(key)] = [node];
  }

  pipeline() {
    const calls: string[] = [];
    const add = (_command: string, args: Array<string | number | Buffer>) => calls.push(String(args[0]));
    return {
      call: add,
      callBuffer: add,
      exec: (): Promise<PipelineReplies> => {
        const node = this.slots[keySlot(calls[0] ?? '')]?.[0] ?? '';
        this.execs.push(node);
        const replies: PipelineReplies = calls.map((key) => [null, `${key}@${node}`]);
        if (node !== this.frozen) return Promise.resolve(replies);
        return new Promise((resolve) => this.held.push(() => resolve(replies)));
      },
    };
  }

  /** The frozen node resumes: its held pipelines answer, late. */
  thaw(): void {
    this.frozen = null;
    for (const release of this.held.splice(0)) release();
  }
}

const call = (key: string): KeyedCall => ({ key, command: 'XREAD', args: [key] });

describe('pipelineByNode with a per-node deadline', () => {
  it('answers the other nodes at once, abandons a silent one at the deadline, sends it nothing more until its late reply, which is dropped', async () => {
    const fake = new FakeCluster({ a: 'n1:1', b: 'n2:1' });
    const client = fake as unknown as Cluster;
    const deadline = { ms: 50, stalled: new Set<string>() };
    const nodeErrors: Error[] = [];
    fake.frozen = 'n2:1';
    const started = Date.now();
    const first = await pipelineByNode(client, [call('a'), call('b')], (e) => nodeErrors.push(e), deadline);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(first[0]).toEqual([null, 'a@n1:1']);
    expect(first[1]?.[0]).toBeInstanceOf(NodeDeadlineError);
    expect(nodeErrors).toHaveLength(1);

    // Still silent: not sent another pipeline, failed without waiting.
    const second = await pipelineByNode(client, [call('a'), call('b')], (e) => nodeErrors.push(e), deadline);
    expect(second[1]?.[0]).toBeInstanceOf(NodeDeadlineError);
    expect(fake.execs).toEqual(['n1:1', 'n2:1', 'n1:1']);

    fake.thaw();
    await new Promise((resolve) => setImmediate(resolve));
    expect(deadline.stalled.size).toBe(0);
    const third = await pipelineByNode(client, [call('b')], (e) => nodeErrors.push(e), deadline);
    expect(third).toEqual([[null, 'b@n2:1']]);
    expect(nodeErrors).toHaveLength(2);
  });
});

import { describe, expect, it } from 'vitest';
import { ReplicationIdProbe } from './ReplicationIdProbe.js';
import { settle } from '@streamgate/protocol/testing';

class FakeNode {
  replid = 'aaaa';
  asked = 0;
  answer: 'ok' | 'error' | 'never' | 'none' = 'ok';
  call(): Promise<unknown> {
    this.asked++;
    if (this.answer === 'never') return new Promise(() => undefined);
    if (this.answer === 'error') return Promise.reject(new Error('Connection is closed.'));
    if (this.answer === 'none') return Promise.resolve('# Replication\r\nrole:master\r\n');
    return Promise.resolve(`# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_replid:${this.replid}\r\nmaster_replid2:0000\r\n`);
  }
}

function harness(nodes: FakeNode[]) {
  let changes = 0;
  const errors: Error[] = [];
  const probe = new ReplicationIdProbe({ nodes: () => nodes, onChange: () => changes++, onError: (e) => errors.push(e) });
  const tick = async (): Promise<void> => {
    probe.probe();
    await settle();
  };
  return { probe, tick, errors, changes: () => changes };
}

describe('ReplicationIdProbe', () => {
  it('reports a node whose replication id changed, once per change, and not its first answer', async () => {
    const nodes = [new FakeNode(), new FakeNode()];
    const h = harness(nodes);
    await h.tick();
    await h.tick();
    expect(h.changes()).toBe(0);
    nodes[1]!.replid = 'bbbb';
    await h.tick();
    expect(h.changes()).toBe(1);
    await h.tick();
    expect(h.changes()).toBe(1);
  });

  it('asks a silent node once, takes errors and id-less replies as no news, and forgets nodes that left', async () => {
    const nodes = [new FakeNode(), new FakeNode()];
    const h = harness(nodes);
    await h.tick();
    nodes[0]!.answer = 'never';
    nodes[1]!.answer = 'error';
    await h.tick();
    await h.tick();
    expect(nodes[0]!.asked).toBe(2);
    expect(h.errors.map((e) => e.message)).toEqual(['Connection is closed.', 'Connection is closed.']);
    nodes[1]!.answer = 'none';
    await h.tick();
    expect(h.changes()).toBe(0);
    // A node that left and came back with another history is a new node: no baseline to compare.
    const back = nodes.splice(1, 1)[0]!;
    await h.tick();
    back.replid = 'cccc';
    back.answer = 'ok';
    nodes.push(back);
    await h.tick();
    expect(h.changes()).toBe(0);
  });
});

import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { isProcessGone } from './isProcessGone.js';
import { startNatsCluster } from './startNatsCluster.js';
import type { NatsCluster } from './startNatsCluster.js';
import { waitFor } from './waitFor.js';

let natsCluster: NatsCluster | undefined;
let authCluster: NatsCluster | undefined;
afterAll(async () => {
  await Promise.all([natsCluster?.stop(), authCluster?.stop()]);
});

describe('startNatsCluster', () => {
  it('starts three JetStream nodes on free ports; an R3 stream keeps every acknowledged write when its leader dies', async () => {
    const cluster = (natsCluster = await startNatsCluster());
    expect(cluster.nodes).toHaveLength(3);
    expect(cluster.nodes.map((node) => node.port)).not.toContain(4222);
    expect(new Set(cluster.nodes.map((node) => node.port)).size).toBe(3);
    expect(cluster.servers.split(',')).toEqual(cluster.nodes.map((node) => node.url));

    const nc = await cluster.connect();
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: 'HARNESS', subjects: ['harness.>'], num_replicas: 3 });
    const js = jetstream(nc);
    const before = await js.publish('harness.a', 'one');
    expect(before.seq).toBe(1);

    const leader = await cluster.streamLeader('HARNESS');
    const pid = cluster.nodes[leader]?.service?.pid ?? -1;
    await cluster.kill(leader);
    expect(isProcessGone(pid)).toBe(true);
    expect(cluster.nodes[leader]?.service).toBeUndefined();

    // Another node takes the stream over with the acknowledged entry, and accepts writes.
    const after = await waitFor(() => js.publish('harness.a', 'two', { timeout: 1_000 }), {
      timeoutMs: 20_000,
      message: 'the R3 stream accepts a write after its leader was killed',
    });
    expect(after.seq).toBe(2);
    expect(await cluster.streamLeader('HARNESS')).not.toBe(leader);
    const first = await jsm.streams.getMessage('HARNESS', { seq: 1 });
    expect(first?.string()).toBe('one');

    await cluster.restart(leader);
    expect(cluster.nodes[leader]?.service?.pid).toBeGreaterThan(0);
    const info = await waitFor(
      async () => {
        const current = await jsm.streams.info('HARNESS');
        const replicas = current.cluster?.replicas ?? [];
        return replicas.length === 2 && replicas.every((replica) => replica.current) && current;
      },
      { timeoutMs: 20_000, message: 'the restarted node catches up as a current replica' },
    );
    expect(info.state.last_seq).toBe(2);
  }, 60_000);

  it('freezes and thaws a node', async () => {
    const cluster = natsCluster ?? (natsCluster = await startNatsCluster());
    const pid = cluster.nodes[0]?.service?.pid ?? -1;
    cluster.freeze(0);
    await waitFor(() => /^T/m.test(procState(pid)), { timeoutMs: 5_000, message: 'node 0 is stopped' });
    cluster.thaw(0);
    await waitFor(() => !/^T/m.test(procState(pid)), { timeoutMs: 5_000, message: 'node 0 runs again' });
  }, 40_000);
});

describe('startNatsCluster with auth', () => {
  // `$` and `#` would start a variable or a comment unquoted: the config must keep them literal.
  const auth = { username: 'streamgate', password: 'pa$$ #word:1' };

  it('refuses a client without the login, serves one with it, and keeps JetStream (R3) across the routes', async () => {
    const cluster = (authCluster = await startNatsCluster({ auth }));
    expect(cluster.auth).toEqual(auth);
    const servers = cluster.nodes.map((node) => node.url);
    await expect(connect({ servers, reconnect: false })).rejects.toThrow(/authorization violation/i);
    await expect(connect({ servers, reconnect: false, user: auth.username, pass: 'wrong' })).rejects.toThrow(/authorization violation/i);

    const direct = await connect({ servers, reconnect: false, user: auth.username, pass: auth.password });
    await direct.close();
    const nc = await cluster.connect();
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.add({ name: 'AUTHED', subjects: ['authed.>'], num_replicas: 3 });
    expect(info.config.num_replicas).toBe(3);
    const ack = await jetstream(nc).publish('authed.a', 'one');
    expect(ack.seq).toBe(1);
    // The stream's replicas live on the other nodes: the routes formed without a client login.
    expect((await jsm.streams.info('AUTHED')).cluster?.replicas).toHaveLength(2);

    // Each cluster has a name of its own, so a route that reaches a node of another cluster
    // (a port freePort() handed out twice) is refused instead of merging the two.
    if (natsCluster === undefined) throw new Error('the first cluster of this file was not started');
    const first = await natsCluster.connect();
    expect(nc.info?.cluster).toMatch(/^streamgate-test-\w/);
    expect(first.info?.cluster).toMatch(/^streamgate-test-\w/);
    expect(first.info?.cluster).not.toBe(nc.info?.cluster);
  }, 60_000);

  it('refuses a login the config language cannot hold, naming the field, before starting anything', async () => {
    await expect(startNatsCluster({ auth: { username: 'u', password: 'say "hi"' } })).rejects.toThrow(
      /^startNatsCluster auth\.password must be/,
    );
    await expect(startNatsCluster({ auth: { username: '', password: 'p' } })).rejects.toThrow(/^startNatsCluster auth\.username must be/);
  });
});

function procState(pid: number): string {
  // Field 3 of /proc/<pid>/stat is the state letter; the command name before it is in parentheses.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
}

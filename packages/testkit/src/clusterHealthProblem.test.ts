import { describe, expect, it } from 'vitest';
import { clusterHealthProblem } from './clusterHealthProblem.js';
import type { ClusterNodeReport } from './clusterHealthProblem.js';
import { clusterSlotOwners } from './clusterSlotOwners.js';
import { parseClusterNodes } from './parseClusterNodes.js';

// Two primaries a (slots 0-8191) and b (8192-16383), c replicates a; epochs 1, 2, 3.
function viewText(myself: 'a' | 'b' | 'c', overrides: Partial<Record<'a' | 'b' | 'c', string>> = {}): string {
  const lines = {
    a: 'a 127.0.0.1:1001@2001 master - 0 0 1 connected 0-8191',
    b: 'b 127.0.0.1:1002@2002 master - 0 0 2 connected 8192-16383',
    c: 'c 127.0.0.1:1003@2003 slave a 0 0 3 connected',
    ...overrides,
  };
  return Object.entries(lines)
    .map(([id, line]) => (id === myself ? line.replace(/ (master|slave)/, ' myself,$1') : line))
    .join('\n');
}

function report(id: 'a' | 'b' | 'c', text = viewText(id), extra: Partial<ClusterNodeReport> = {}): ClusterNodeReport {
  return {
    port: { a: 1001, b: 1002, c: 1003 }[id],
    id,
    clusterInfo: 'cluster_state:ok\r\ncluster_slots_assigned:16384\r\n',
    view: parseClusterNodes(text),
    replicationInfo: id === 'c' ? 'role:slave\r\nmaster_link_status:up\r\n' : 'role:master\r\n',
    ...extra,
  };
}

const ALL = new Set(['a', 'b', 'c']);

describe('clusterHealthProblem', () => {
  it('finds none when every node agrees, says ok and its replica is linked', () => {
    expect(clusterHealthProblem([report('a'), report('b'), report('c')], ALL)).toBeUndefined();
  });

  it('names the first problem: state, failing flag, orphan slot, disagreement, replica link', () => {
    expect(clusterHealthProblem([report('a', undefined, { clusterInfo: 'cluster_state:fail\r\n' })], ALL)).toBe(
      'node :1001 reports cluster_state:fail',
    );
    const flagged = viewText('b', { a: 'a 127.0.0.1:1001@2001 master,fail? - 0 0 1 connected 0-8191' });
    expect(clusterHealthProblem([report('b', flagged)], ALL)).toMatch(/node :1002 flags live node :1001 as master,fail\?/);
    expect(clusterHealthProblem([report('b')], new Set(['b', 'c']))).toBe('node :1002 sees slot 0 without a live primary');
    const moved = viewText('b', {
      a: 'a 127.0.0.1:1001@2001 master - 0 0 1 connected 0-8190',
      b: 'b 127.0.0.1:1002@2002 master - 0 0 2 connected 8191-16383',
    });
    expect(clusterHealthProblem([report('a'), report('b', moved)], ALL)).toMatch(/disagrees/);
    const unlinked = report('c', undefined, { replicationInfo: 'role:slave\r\nmaster_link_status:down\r\n' });
    expect(clusterHealthProblem([unlinked], ALL)).toBe('replica node :1003 has master_link_status:down');
    expect(clusterHealthProblem([], ALL)).toBe('no node is running');
  });
});

describe('clusterSlotOwners', () => {
  it('gives a slot to the live claimant with the highest epoch, whatever view is stale', () => {
    // c was promoted (epoch 4) while a was down; b has not heard of it yet, a came back claiming its slots.
    const promoted = viewText('c', {
      a: 'a 127.0.0.1:1001@2001 slave c 0 0 1 connected',
      c: 'c 127.0.0.1:1003@2003 master - 0 0 4 connected 0-8191',
    });
    const views = [parseClusterNodes(viewText('a')), parseClusterNodes(viewText('b')), parseClusterNodes(promoted)];
    const owners = clusterSlotOwners(views, ALL);
    expect(owners[0]).toBe('c');
    expect(owners[8191]).toBe('c');
    expect(owners[8192]).toBe('b');
    // A claim by a node that is not running does not count.
    expect(clusterSlotOwners([parseClusterNodes(viewText('b'))], new Set(['b', 'c']))[0]).toBeUndefined();
  });
});

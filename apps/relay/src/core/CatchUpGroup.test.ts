import { describe, expect, it } from 'vitest';
import { CloseCode } from '@streamgate/protocol';
import { ended, endings, hubFixture, untilSettled } from '../testing/hubFixture.js';

// The catch-up group through the hub that owns it: pages, the seam with the live topic, and the
// sockets that cannot keep up.
describe('CatchUpGroup', () => {
  it('sends no catch-up entry the live reader has not published yet: those arrive live, once', async () => {
    const { source, hub, connect } = hubFixture(20);
    source.append(10);
    await hub.subscribe(connect(), 'w', 'st', undefined, 0, ended).started;
    // Stored but not yet read by this pod: the page will run past the live cursor.
    source.append(5);
    const c = connect();
    await hub.subscribe(c, 's', 'st', '5-0', 0, ended).started;
    await untilSettled(() => c.ops().includes('live'));
    expect(c.seqs()).toEqual([6, 7, 8, 9, 10]);
    source.read();
    expect(c.seqs()).toEqual([6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
  });

  it('cuts a catching-up socket whose unsent bytes pass the hard limit, and counts it', async () => {
    const { source, hub, connect, metrics } = hubFixture(3, 1 << 18, { maxBufferedBytes: 500, maxPendingCatchUpBytes: 1_000 });
    source.append(10);
    await hub.subscribe(connect(), 'w', 'st', undefined, 0, ended).started;
    const slow = connect();
    slow.frameCost = 300;
    await hub.subscribe(slow, 's', 'st', '0-0', 0, ended).started;
    await untilSettled(() => slow.closed);
    expect(slow.closedWith?.code).toBe(CloseCode.slowConsumer);
    expect(metrics.calls).toContain('slowConsumerCut');
    expect(slow.ops()).not.toContain('live');
    expect(slow.topics.size).toBe(0);
  });

  it('cuts a socket that is already over the hard limit before the next page', async () => {
    const { source, hub, connect, metrics } = hubFixture(3, 1 << 18, { maxBufferedBytes: 500 });
    source.append(10);
    await hub.subscribe(connect(), 'w', 'st', undefined, 0, ended).started;
    const slow = connect();
    slow.buffered = 600;
    await hub.subscribe(slow, 's', 'st', '0-0', 0, ended).started;
    await untilSettled(() => slow.closed);
    expect(slow.seqs()).toEqual([]);
    expect(metrics.calls).toEqual(['recovery:fresh', 'recovery:recovered', 'slowConsumerCut']);
  });

  it('goes on after a refused send from the entry that was refused, with no gap', async () => {
    const { source, hub, connect } = hubFixture(4);
    source.append(12);
    await hub.subscribe(connect(), 'w', 'st', undefined, 0, ended).started;
    const c = connect();
    const sub = hub.subscribe(c, 's', 'st', '0-0', 0, ended);
    await sub.started;
    // The next two sends hit the backpressure limit.
    c.refuseNext = 2;
    await untilSettled(() => c.ops().includes('live'));
    expect(c.refuseNext).toBe(0);
    expect(c.seqs()).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(endings).toEqual([]);
  });

  it('forgets a member whose socket closed during a page read, without promoting it', async () => {
    const { source, hub, connect } = hubFixture(3);
    source.append(9);
    await hub.subscribe(connect(), 'w', 'st', undefined, 0, ended).started;
    const gone = connect();
    const stays = connect();
    let reads = 0;
    source.beforeRange = () => {
      if (++reads === 1) gone.closed = true;
    };
    await Promise.all([hub.subscribe(gone, 'g', 'st', '0-0', 0, ended).started, hub.subscribe(stays, 's', 'st', '0-0', 0, ended).started]);
    await untilSettled(() => stays.ops().includes('live'));
    expect(stays.seqs()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(gone.ops()).not.toContain('live');
    expect(gone.topics.size).toBe(0);
  });

  it('lets a member told of a trimmed gap take the page after it while others at the gap are ended', async () => {
    const { source, hub, connect } = hubFixture(2);
    source.append(10);
    source.trimTo(4);
    await hub.subscribe(connect(), 'w', 'st', undefined, 0, ended).started;
    const told = connect();
    // Its resume from 3-0 is answered truncated: the gap at 3-0 is acknowledged.
    await hub.subscribe(told, 't', 'st', '3-0', 0, ended).started;
    await untilSettled(() => told.ops().includes('live'));
    expect(told.frames[0]).toMatchObject({ recovery: 'truncated' });
    expect(told.seqs()).toEqual([7, 8, 9, 10]);
    expect(endings).toEqual([]);
  });
});

import { describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { ended, endings, hubFixture as setup, untilSettled } from '../testing/hubFixture.js';

describe('StreamHub', () => {
  it('starts a fresh subscriber live at the pod cursor', async () => {
    const { source, hub, connect } = setup();
    source.append(5);
    const c = connect();
    expect(await hub.subscribe(c, 's', 'st', undefined, 0, ended).started).toEqual({ ok: true });
    source.append(2);
    source.read();
    expect(c.ops()).toEqual(['subscribed', 'live', 'event', 'event']);
    expect(c.seqs()).toEqual([6, 7]);
  });

  it('answers a subscribe at the cursor with subscribed then live in one socket write, events after it in writes of their own', async () => {
    const { source, hub, connect } = setup();
    source.append(3);
    const fresh = connect();
    await hub.subscribe(fresh, 'f', 'st', undefined, 0, ended).started;
    const resumed = connect();
    await hub.subscribe(resumed, 'r', 'st', '3-0', 0, ended).started;
    source.append(1);
    source.read();
    for (const c of [fresh, resumed]) {
      expect(c.ops()).toEqual(['subscribed', 'live', 'event']);
      expect(c.writes[0]).toBe(c.writes[1]);
      expect(c.writes[2]).not.toBe(c.writes[1]);
    }
    expect(resumed.frames[0]).toMatchObject({ op: 'subscribed', recovery: 'recovered', position: '3-0' });
  });

  it('catches up in pages and joins live with no gap and no duplicate at the seam', async () => {
    const { source, hub, connect } = setup(3);
    source.append(10);
    const watcher = connect();
    await hub.subscribe(watcher, 'w', 'st', undefined, 0, ended).started;
    const c = connect();
    const sub = hub.subscribe(c, 's', 'st', '2-0', 0, ended);
    // Entries arrive and are published while the catch-up pages are being read.
    source.append(4);
    source.read();
    await sub.started;
    await untilSettled(() => c.ops().includes('live'));
    source.append(3);
    source.read();
    expect(c.seqs()).toEqual(Array.from({ length: 15 }, (_, i) => i + 3));
    expect(c.frames[0]).toMatchObject({ op: 'subscribed', recovery: 'recovered' });
  });

  it('paces a catch-up to a socket that is slow to drain, without holding back the others or cutting it', async () => {
    const { source, hub, connect } = setup(10, 250);
    source.append(30);
    await hub.subscribe(connect(), 'w', 'st', undefined, 0, ended).started;
    const slow = connect();
    slow.frameCost = 100;
    const fast = connect();
    const slowSub = hub.subscribe(slow, 's', 'st', '0-0', 0, ended);
    const fastSub = hub.subscribe(fast, 'f', 'st', '0-0', 0, ended);
    await Promise.all([slowSub.started, fastSub.started]);
    await untilSettled(() => fast.ops().includes('live'));
    expect(fast.seqs()).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    // The slow socket got frames until it held more than 250 bytes (its `subscribed` frame counts), then nothing more.
    await waitFor(() => slow.seqs().length === 2, { timeoutMs: 2_000, message: 'slow socket never got its first frames' });
    expect(slow.ops()).not.toContain('live');
    // Paused catch-ups look again every few milliseconds; each drain lets three more through.
    for (let round = 0; round < 20 && !slow.ops().includes('live'); round++) {
      slow.buffered = 0;
      await waitFor(() => slow.buffered > 250 || slow.ops().includes('live'), {
        timeoutMs: 2_000,
        message: 'a drained socket got nothing more',
      });
    }
    expect(slow.seqs()).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(slow.ops()).toContain('live');
    expect(slow.closed).toBe(false);
    source.append(1);
    source.read();
    expect(slow.seqs().at(-1)).toBe(31);
  });

  it('holds a client that is ahead of the pod cursor until the reader reaches its position', async () => {
    const { source, hub, connect } = setup();
    source.append(3);
    const first = connect();
    await hub.subscribe(first, 'a', 'st', undefined, 0, ended).started;
    // Entries 4–8 exist in storage but this pod's reader has not delivered them yet.
    source.append(5);
    const ahead = connect();
    await hub.subscribe(ahead, 'b', 'st', '6-0', 0, ended).started;
    expect(ahead.ops()).toEqual(['subscribed']);
    source.read();
    expect(ahead.seqs()).toEqual([7, 8]);
    expect(first.seqs()).toEqual([4, 5, 6, 7, 8]);
    expect(ahead.ops()).toEqual(['subscribed', 'live', 'event', 'event']);
  });

  it('releases a waiting client as soon as the cursor reaches it, even with nothing after it', async () => {
    const { source, hub, connect } = setup();
    source.append(2);
    await hub.subscribe(connect(), 'a', 'st', undefined, 0, ended).started;
    source.append(2);
    const ahead = connect();
    await hub.subscribe(ahead, 'b', 'st', '4-0', 0, ended).started;
    source.read();
    expect(ahead.ops()).toEqual(['subscribed', 'live']);
  });

  it('serves concurrent catch-ups of one stream with one walk', async () => {
    const { source, hub, connect } = setup(5);
    source.append(50);
    await hub.subscribe(connect(), 'w', 'st', undefined, 0, ended).started;
    const clients = Array.from({ length: 20 }, () => connect());
    const subs = clients.map((c, i) => hub.subscribe(c, 's', 'st', `${i + 1}-0`, 0, ended));
    await Promise.all(subs.map((s) => s.started));
    await untilSettled(() => clients.every((c) => c.ops().includes('live')));
    clients.forEach((c, i) => expect(c.seqs()).toEqual(Array.from({ length: 50 - (i + 1) }, (_, k) => i + 2 + k)));
    // One walk of 50 entries in pages of 5 (plus the final short read), not 20 walks.
    expect(source.rangeCalls).toBeLessThanOrEqual(12);
  });

  it('ends a catch-up whose history is trimmed under it instead of skipping silently', async () => {
    const { source, hub, connect } = setup(2);
    source.append(20);
    await hub.subscribe(connect(), 'w', 'st', undefined, 0, ended).started;
    const c = connect();
    let reads = 0;
    source.beforeRange = () => {
      if (++reads === 2) source.trimTo(5);
    };
    await hub.subscribe(c, 's', 'st', '1-0', 0, ended).started;
    await untilSettled(() => endings.length > 0);
    expect(endings).toEqual([expect.objectContaining({ code: 'history_trimmed' })]);
    // Entries 2–3 came from the first page; nothing after the trimmed gap was passed off as contiguous.
    expect(c.seqs()).toEqual([2, 3]);
    expect(c.ops()).not.toContain('live');
  });

  it('answers truncated for a trimmed position and then delivers what is retained, once', async () => {
    const { source, hub, connect } = setup(2);
    source.append(20);
    source.trimTo(5);
    await hub.subscribe(connect(), 'w', 'st', undefined, 0, ended).started;
    const c = connect();
    await hub.subscribe(c, 's', 'st', '3-0', 0, ended).started;
    await untilSettled(() => c.ops().includes('live'));
    expect(c.frames[0]).toMatchObject({ op: 'subscribed', recovery: 'truncated' });
    expect(c.seqs()).toEqual([16, 17, 18, 19, 20]);
    expect(endings).toEqual([]);
  });

  it('ends a subscriber whose catch-up read fails, so the client can subscribe again', async () => {
    const { source, hub, connect } = setup();
    source.append(10);
    await hub.subscribe(connect(), 'w', 'st', undefined, 0, ended).started;
    source.failNextRange = true;
    const c = connect();
    await hub.subscribe(c, 's', 'st', '1-0', 0, ended).started;
    await untilSettled(() => endings.length > 0);
    expect(endings).toEqual([expect.objectContaining({ code: 'stream_unavailable' })]);
    source.append(1);
    source.read();
    expect(c.seqs()).toEqual([]);
  });

  it('ends every subscriber of a stream whose key stops being a stream', async () => {
    const { source, hub, connect } = setup();
    source.append(1);
    const c = connect();
    await hub.subscribe(c, 's', 'st', undefined, 0, ended).started;
    source.listener.failed('st', { code: 'source_wrong_type', retryable: false, message: 'the key is not a stream' });
    expect(endings).toEqual([expect.objectContaining({ code: 'stream_unavailable' })]);
    expect(c.topics.size).toBe(0);
  });

  it('sends nothing to a subscriber removed while its start is pending', async () => {
    const { source, hub, connect } = setup();
    source.append(5);
    const c = connect();
    const sub = hub.subscribe(c, 's', 'st', '1-0', 0, ended);
    hub.unsubscribe(sub);
    const result = await sub.started;
    expect(result.ok).toBe(false);
    source.append(1);
    source.read();
    expect(c.frames).toEqual([]);
  });
});

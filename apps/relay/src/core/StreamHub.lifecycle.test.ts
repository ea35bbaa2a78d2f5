import { describe, expect, it } from 'vitest';
import { waitFor, withDeadline } from '@streamgate/testkit';
import { ended, endings, hubFixture, untilSettled } from '../testing/hubFixture.js';

describe('StreamHub lifecycle', () => {
  it('keeps a stream watched while it lingers, reuses it for a returning subscriber, and stops it after the linger', async () => {
    const { source, hub, connect } = hubFixture(3, 1 << 18, { lingerMs: 30 });
    source.append(2);
    const first = hub.subscribe(connect(), 'a', 'st', undefined, 0, ended);
    await first.started;
    expect(hub.streamsWithSubscribers()).toEqual(['st']);
    hub.unsubscribe(first);
    // Lingering: still read, but no longer demand.
    expect(hub.streamsWithSubscribers()).toEqual([]);
    expect(hub.streamCount).toBe(1);
    const back = connect();
    await hub.subscribe(back, 'b', 'st', undefined, 0, ended).started;
    expect(source.inspectCalls).toBe(1);
    source.append(1);
    source.read();
    expect(back.seqs()).toEqual([3]);
    const brief = hub.subscribe(connect(), 'c', 'other', undefined, 0, ended);
    await brief.started;
    expect(source.watched.has('other')).toBe(true);
    hub.unsubscribe(brief);
    expect(hub.streamCount).toBe(2);
    await waitFor(() => hub.streamCount === 1, { timeoutMs: 2_000, message: 'an idle stream was never released' });
    expect(source.watched.has('other')).toBe(false);
    expect(source.watched.has('st')).toBe(true);
  });

  it('stops reading every stream and closes the source on close', async () => {
    const { source, hub, connect } = hubFixture(3, 1 << 18, { lingerMs: 60_000 });
    const sub = hub.subscribe(connect(), 'a', 'st', undefined, 0, ended);
    await sub.started;
    hub.unsubscribe(sub);
    expect(hub.healthy).toBe(true);
    source.healthy = false;
    expect(hub.healthy).toBe(false);
    await hub.close();
    expect(hub.streamCount).toBe(0);
    expect(source.watched.size).toBe(0);
  });

  it('answers a subscriber whose stream cannot be inspected with a retryable error, and retries with the next', async () => {
    const { source, hub, connect, metrics } = hubFixture();
    source.append(1);
    const original = source.inspect.bind(source);
    source.inspect = () =>
      Promise.resolve({ ok: false, error: { code: 'source_unavailable', retryable: true, message: 'connection lost' } });
    const failed = await hub.subscribe(connect(), 'a', 'st', undefined, 0, ended).started;
    expect(failed).toEqual({
      ok: false,
      error: { code: 'stream_unavailable', retryable: true, message: 'stream cannot be read: connection lost' },
    });
    expect(metrics.calls).toEqual(['sourceError:xinfo']);
    expect(hub.streamCount).toBe(0);
    source.inspect = original;
    expect(await hub.subscribe(connect(), 'b', 'st', undefined, 0, ended).started).toEqual({ ok: true });
  });

  it('answers a resume whose own metadata read fails, leaving the stream to its live subscribers', async () => {
    const { source, hub, connect, metrics } = hubFixture();
    source.append(3);
    const live = connect();
    await hub.subscribe(live, 'a', 'st', undefined, 0, ended).started;
    source.inspect = () =>
      Promise.resolve({ ok: false, error: { code: 'source_unavailable', retryable: true, message: 'connection lost' } });
    const resumed = connect();
    expect(await hub.subscribe(resumed, 'b', 'st', '1-0', 0, ended).started).toMatchObject({
      ok: false,
      error: { code: 'stream_unavailable' },
    });
    expect(metrics.calls).toContain('sourceError:xinfo');
    source.append(1);
    source.read();
    expect(live.seqs()).toEqual([4]);
    expect(resumed.frames).toEqual([]);
  });

  it('sends nothing to a resume cancelled while its metadata is read', async () => {
    const { source, hub, connect } = hubFixture();
    source.append(3);
    await hub.subscribe(connect(), 'w', 'st', undefined, 0, ended).started;
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    source.holdInspect = () => held;
    const c = connect();
    const sub = hub.subscribe(c, 's', 'st', '1-0', 0, ended);
    await untilSettled(() => source.inspectCalls === 2);
    hub.unsubscribe(sub);
    release();
    expect(await withDeadline(sub.started, 2_000, 'cancelled resume never settled')).toMatchObject({
      ok: false,
      error: { code: 'unknown_subscription' },
    });
    expect(c.frames).toEqual([]);
  });

  it('drops a waiting subscriber that leaves before the reader reaches it', async () => {
    const { source, hub, connect } = hubFixture();
    source.append(1);
    await hub.subscribe(connect(), 'w', 'st', undefined, 0, ended).started;
    source.append(3);
    const c = connect();
    const sub = hub.subscribe(c, 's', 'st', '3-0', 0, ended);
    await sub.started;
    hub.unsubscribe(sub);
    source.read();
    expect(c.ops()).toEqual(['subscribed']);
    expect(hub.positionOf(sub)).toBe('3-0');
  });

  it('ignores entries handed over again, and listener calls for streams it does not hold', async () => {
    const { source, hub, connect } = hubFixture();
    source.append(2);
    const c = connect();
    await hub.subscribe(c, 's', 'st', undefined, 0, ended).started;
    source.append(2);
    source.read();
    hub.listener.entries('st', source.entries.slice(1));
    expect(c.seqs()).toEqual([3, 4]);
    hub.listener.entries('nope', source.entries);
    hub.listener.reset('nope');
    hub.listener.failed('nope', { code: 'source_wrong_type', retryable: false, message: 'x' });
    expect(endings).toEqual([]);
    expect(c.ops()).toEqual(['subscribed', 'live', 'event', 'event']);
  });
});

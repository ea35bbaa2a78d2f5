import { describe, expect, it } from 'vitest';
import { ended, endings, hubFixture, untilSettled } from '../testing/hubFixture.js';

describe('StreamHub with its target unavailable', () => {
  it('ends every subscription, live, catching up and starting, with a retryable stream_unavailable and stops reading', async () => {
    const { source, hub, connect } = hubFixture(2);
    source.append(10);
    const live = connect();
    await hub.subscribe(live, 'l', 'st', undefined, 0, ended).started;
    const other = connect();
    await hub.subscribe(other, 'o', 'other', undefined, 0, ended).started;
    // A resume whose metadata read is held: still starting when the target goes down.
    let release: () => void = () => undefined;
    source.holdInspect = () => new Promise<void>((resolve) => (release = resolve));
    const starting = hub.subscribe(connect(), 's', 'st', '3-0', 0, ended);
    await untilSettled(() => source.inspectCalls === 3);
    hub.markUnavailable('redis down');
    expect(endings).toEqual([
      { code: 'stream_unavailable', retryable: true, message: 'redis down' },
      { code: 'stream_unavailable', retryable: true, message: 'redis down' },
    ]);
    expect(await starting.started).toEqual({ ok: false, error: { code: 'stream_unavailable', retryable: true, message: 'redis down' } });
    expect(hub.streamCount).toBe(0);
    expect(source.watched.size).toBe(0);
    expect(live.topics.size).toBe(0);
    release();
    await Promise.resolve();
    // The held resume's late answer sends nothing.
    expect(hub.subscriberCount).toBe(0);
  });

  it('refuses subscribes at once while unavailable or unhealthy, without reading, and serves them again after', async () => {
    const { source, hub, connect } = hubFixture();
    source.append(3);
    hub.markUnavailable('redis down');
    expect(hub.available).toBe(false);
    const refused = connect();
    expect(await hub.subscribe(refused, 'a', 'st', '1-0', 0, ended).started).toEqual({
      ok: false,
      error: { code: 'stream_unavailable', retryable: true, message: 'redis down' },
    });
    hub.markAvailable();
    source.healthy = false;
    expect(await hub.subscribe(connect(), 'b', 'st', undefined, 0, ended).started).toMatchObject({
      ok: false,
      error: { code: 'stream_unavailable', retryable: true },
    });
    expect(source.inspectCalls).toBe(0);
    expect(refused.frames).toEqual([]);
    source.healthy = true;
    const back = connect();
    expect(await hub.subscribe(back, 'c', 'st', '1-0', 0, ended).started).toEqual({ ok: true });
    await untilSettled(() => back.ops().includes('live'));
    expect(back.seqs()).toEqual([2, 3]);
  });
});

import { describe, expect, it } from 'vitest';
import { withDeadline } from '@streamgate/testkit';
import { ended, endings, hubFixture, untilSettled } from '../testing/hubFixture.js';
import type { HubTestConnection } from '../testing/hubFixture.js';

// The key is deleted and recreated while the pod reads it: the new incarnation's ids (0-1, 0-2, …)
// are all below the old ones (1-0 … n-0). Whatever phase a subscriber is in, it must end with the
// stream_reset notice and then every entry of the new incarnation, once, in order.

/** Frames from the reset notice on: the notice, maybe `live`, then the new incarnation. */
function afterReset(c: HubTestConnection): string[] {
  const at = c.frames.findIndex((f) => f.op === 'stream_reset');
  if (at < 0) return [];
  return c.frames
    .slice(at)
    .map((f) => (f.op === 'event' || f.op === 'malformed' ? (f.id ?? '?') : f.op === 'stream_reset' ? `reset@${f.position}` : f.op));
}

describe('StreamHub on a recreated stream', () => {
  it('tells a live subscriber once, then delivers every entry of the new incarnation, including later ones', async () => {
    const { source, hub, connect } = hubFixture();
    source.append(5);
    const c = connect();
    const sub = hub.subscribe(c, 's', 'st', undefined, 0, ended);
    await sub.started;
    source.append(1);
    source.read();
    source.recreate(3);
    source.noticeReset();
    expect(hub.positionOf(sub)).toBe('0-0');
    source.read();
    source.append(1);
    source.read();
    expect(c.ids()).toEqual(['6-0', '0-1', '0-2', '0-3', '0-4']);
    expect(afterReset(c)).toEqual(['reset@0-0', '0-1', '0-2', '0-3', '0-4']);
    expect(c.frames.filter((f) => f.op === 'stream_reset')).toEqual([{ op: 'stream_reset', stream: 'st', position: '0-0' }]);
    expect(hub.positionOf(sub)).toBe('0-4');
  });

  it('moves a subscriber that is catching up when the reset comes onto the new incarnation, discarding the page in flight', async () => {
    const { source, hub, connect } = hubFixture(3);
    source.append(10);
    await hub.subscribe(connect(), 'w', 'st', undefined, 0, ended).started;
    const c = connect();
    let reads = 0;
    source.beforeRange = () => {
      // The second page is read from the old incarnation, and the reader notices the new one meanwhile.
      if (++reads === 2) {
        source.noticeReset();
        source.recreate(4);
      }
    };
    await hub.subscribe(c, 's', 'st', '1-0', 0, ended).started;
    await untilSettled(() => c.ops().includes('live'));
    source.read();
    source.append(1);
    source.read();
    expect(c.ids()).toEqual(['2-0', '3-0', '4-0', '0-1', '0-2', '0-3', '0-4', '0-5']);
    expect(afterReset(c)).toEqual(['reset@0-0', 'live', '0-1', '0-2', '0-3', '0-4', '0-5']);
    expect(endings).toEqual([]);
  });

  it('releases a subscriber waiting ahead of the cursor onto the new incarnation', async () => {
    const { source, hub, connect } = hubFixture();
    source.append(2);
    await hub.subscribe(connect(), 'w', 'st', undefined, 0, ended).started;
    source.append(3);
    const c = connect();
    await hub.subscribe(c, 's', 'st', '4-0', 0, ended).started;
    expect(c.ops()).toEqual(['subscribed']);
    source.recreate(2);
    source.noticeReset();
    source.read();
    expect(afterReset(c)).toEqual(['reset@0-0', 'live', '0-1', '0-2']);
    expect(c.ids()).toEqual(['0-1', '0-2']);
  });

  it('decides a resume again when the stream was recreated while its metadata was read', async () => {
    const { source, hub, connect } = hubFixture();
    source.append(5);
    const w = connect();
    await hub.subscribe(w, 'w', 'st', undefined, 0, ended).started;
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    source.holdInspect = () => held;
    const c = connect();
    // The answer to this inspect describes the old incarnation, where 2-0 is still stored.
    const sub = hub.subscribe(c, 's', 'st', '2-0', 0, ended);
    await untilSettled(() => source.inspectCalls === 1);
    source.holdInspect = null;
    source.recreate(3);
    source.noticeReset();
    release();
    expect(await withDeadline(sub.started, 2_000, 'resume never settled')).toEqual({ ok: true });
    source.read();
    expect(c.frames[0]).toMatchObject({ op: 'subscribed', recovery: 'reset', position: '0-0' });
    expect(c.ids()).toEqual(['0-1', '0-2', '0-3']);
    expect(afterReset(w)).toEqual(['reset@0-0', '0-1', '0-2', '0-3']);
  });

  it('answers a resume that keeps racing recreations with reset from the start of the stream', async () => {
    const { source, hub, connect } = hubFixture();
    source.append(5);
    await hub.subscribe(connect(), 'w', 'st', undefined, 0, ended).started;
    const c = connect();
    // Every metadata read is overtaken by a reset notice: the relay stops re-reading after a few.
    source.holdInspect = () => Promise.resolve().then(() => hub.listener.reset('st'));
    const sub = hub.subscribe(c, 's', 'st', '3-0', 0, ended);
    expect(await withDeadline(sub.started, 2_000, 'resume never settled')).toEqual({ ok: true });
    expect(source.inspectCalls).toBe(1 + 3);
    expect(c.frames[0]).toMatchObject({ op: 'subscribed', recovery: 'reset', position: '0-0' });
  });

  it('gives a subscriber arriving after the reset every entry of the new incarnation', async () => {
    const { source, hub, connect } = hubFixture(2);
    source.append(4);
    await hub.subscribe(connect(), 'w', 'st', undefined, 0, ended).started;
    source.recreate(5);
    source.noticeReset();
    source.read();
    const fresh = connect();
    await hub.subscribe(fresh, 'a', 'st', '0-0', 0, ended).started;
    await untilSettled(() => fresh.ops().includes('live'));
    expect(fresh.frames[0]).toMatchObject({ op: 'subscribed', recovery: 'recovered', position: '0-0' });
    expect(fresh.ids()).toEqual(['0-1', '0-2', '0-3', '0-4', '0-5']);
    expect(fresh.ops()).not.toContain('stream_reset');
  });
});

describe('StreamHub on entries the source could not read faithfully', () => {
  it('sends malformed with the source reason, live and in catch-up, and the id still advances', async () => {
    const { source, hub, connect, metrics } = hubFixture();
    source.append(1);
    const live = connect();
    const liveSub = hub.subscribe(live, 'l', 'st', undefined, 0, ended);
    await liveSub.started;
    // The fields hold the lossy text the client library produced; it must not reach the client as data.
    source.push(['data', '"caf\uFFFD"'], 'field "data" is not valid UTF-8');
    source.append(1);
    source.read();
    expect(live.frames.slice(2)).toEqual([
      { op: 'malformed', stream: 'st', id: '2-0', reason: 'field "data" is not valid UTF-8' },
      { op: 'event', stream: 'st', id: '3-0', data: { seq: 3 } },
    ]);
    expect(hub.positionOf(liveSub)).toBe('3-0');
    const late = connect();
    await hub.subscribe(late, 'c', 'st', '1-0', 0, ended).started;
    await untilSettled(() => late.ops().includes('live'));
    expect(late.frames.filter((f) => f.op === 'malformed')).toEqual([
      { op: 'malformed', stream: 'st', id: '2-0', reason: 'field "data" is not valid UTF-8' },
    ]);
    expect(late.ids()).toEqual(['2-0', '3-0']);
    expect(metrics.calls.filter((m) => m === 'malformedEntry')).toHaveLength(2);
  });
});

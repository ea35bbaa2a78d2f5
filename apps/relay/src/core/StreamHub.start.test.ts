import { describe, expect, it } from 'vitest';
import { withDeadline } from '@streamgate/testkit';
import { ended, hubFixture } from '../testing/hubFixture.js';

// A source is meant to answer with a typed result, but a client library can still throw; the
// subscriber must then be answered, not left pending, and the stream must be retried.
describe('StreamHub start failures', () => {
  it('settles a subscriber whose channel start throws with a retryable error and retries with the next one', async () => {
    const { source, hub, connect, metrics } = hubFixture();
    source.append(2);
    source.rejectNextInspect = true;
    const first = connect();
    const failed = await withDeadline(hub.subscribe(first, 'a', 'st', undefined, 0, ended).started, 2_000, 'start never settled');
    expect(failed).toEqual({
      ok: false,
      error: { code: 'stream_unavailable', retryable: true, message: 'stream cannot be read: client library failed' },
    });
    expect(metrics.calls).toContain('sourceError:start');
    expect(first.frames).toEqual([]);
    expect(hub.streamCount).toBe(0);

    const second = connect();
    expect(await withDeadline(hub.subscribe(second, 'b', 'st', undefined, 0, ended).started, 2_000, 'retry never settled')).toEqual({
      ok: true,
    });
    source.append(1);
    source.read();
    expect(second.ops()).toEqual(['subscribed', 'live', 'event']);
  });

  it('settles every subscriber waiting on the same failed start', async () => {
    const { source, hub, connect } = hubFixture();
    source.rejectNextInspect = true;
    const subs = [hub.subscribe(connect(), 'a', 'st', undefined, 0, ended), hub.subscribe(connect(), 'b', 'st', '1-0', 0, ended)];
    const results = await withDeadline(Promise.all(subs.map((s) => s.started)), 2_000, 'a start never settled');
    expect(results.map((r) => r.ok)).toEqual([false, false]);
    expect(hub.streamCount).toBe(0);
  });

  it('retries the stream for the next subscriber after a failed start whose own subscriber had left', async () => {
    const { source, hub, connect } = hubFixture(3, 1 << 18, { lingerMs: 60_000 });
    source.rejectNextInspect = true;
    const gone = hub.subscribe(connect(), 'a', 'st', undefined, 0, ended);
    // Removed before its start failed: the failed channel must still be dropped, not left to linger.
    hub.unsubscribe(gone);
    await withDeadline(gone.started, 2_000, 'start never settled');
    const next = hub.subscribe(connect(), 'b', 'st', undefined, 0, ended);
    expect(await withDeadline(next.started, 2_000, 'retry never settled')).toEqual({ ok: true });
    await hub.close();
  });

  it('settles a resume whose own inspect throws, leaving the stream to its other subscribers', async () => {
    const { source, hub, connect, metrics } = hubFixture();
    source.append(3);
    const live = connect();
    await hub.subscribe(live, 'a', 'st', undefined, 0, ended).started;
    source.rejectNextInspect = true;
    const resumed = await withDeadline(hub.subscribe(connect(), 'b', 'st', '1-0', 0, ended).started, 2_000, 'resume never settled');
    expect(resumed).toMatchObject({ ok: false, error: { code: 'stream_unavailable', retryable: true } });
    expect(metrics.calls).toContain('sourceError:start');
    source.append(1);
    source.read();
    expect(live.seqs()).toEqual([4]);
  });
});

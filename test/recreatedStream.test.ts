import { describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { demoStreamOn } from './support/demoStreamOn.js';
import { metricValue, useFleet } from './support/startFleet.js';
import { openFrameLog } from './support/frameLog.js';
import type { FrameLog, WireFrame } from './support/frameLog.js';

const getFleet = useFleet({ relays: 1 });

/** The frames about one stream or subscription, without `live` (its place is not the point here). */
const about = (log: FrameLog, stream: string, sid: string): WireFrame[] =>
  log.frames.filter((f) => (f.stream === stream || f.sid === sid) && f.op !== 'live');

const eventIds = (frames: readonly WireFrame[]): string[] => frames.filter((f) => f.op === 'event').map((f) => f.id ?? '?');

describe('a stream deleted and recreated under a live subscription', () => {
  it('tells the live subscriber with stream_reset, then delivers every entry of the new incarnation once, in order; a resuming one gets reset and all of them', async () => {
    const { relay, key, redis, token } = demoStreamOn(getFleet(), 'recreated');

    const live = await openFrameLog(relay.url);
    const resuming = await openFrameLog(relay.url);
    try {
      live.send({ op: 'subscribe', sid: 'live', token: await token('alice') });
      await live.until((fs) => fs.some((f) => f.op === 'live' && f.sid === 'live'), 'live subscriber never went live');
      const old: string[] = [];
      for (let i = 0; i < 3; i++) old.push(String(await redis.xadd(key, '*', 'data', JSON.stringify({ old: i }))));
      await live.until((fs) => eventIds(fs).length === 3, 'live subscriber never got the old incarnation');
      const lastOld = old[2] ?? '';

      // The new incarnation restarts its ids far below the old ones.
      await redis.del(key);
      for (const id of ['1-1', '1-2', '1-3']) await redis.xadd(key, id, 'data', JSON.stringify({ id }));
      resuming.send({ op: 'subscribe', sid: 'resuming', token: await token('bob'), from: lastOld });
      await resuming.until((fs) => eventIds(fs).length >= 3, 'resuming subscriber never got the entries written before it came');
      await redis.xadd(key, '1-4', 'data', JSON.stringify({ id: '1-4' }));
      const later: string[] = [];
      for (let i = 0; i < 3; i++) later.push(String(await redis.xadd(key, '*', 'data', JSON.stringify({ later: i }))));
      const incarnation = ['1-1', '1-2', '1-3', '1-4', ...later];

      const done = (log: FrameLog, sid: string) => (): boolean => eventIds(about(log, key, sid)).includes(later[2] ?? '');
      await live.until(done(live, 'live'), 'live subscriber never got the end of the new incarnation');
      await resuming.until(done(resuming, 'resuming'), 'resuming subscriber never got the end of the new incarnation');

      const liveFrames = about(live, key, 'live');
      expect(liveFrames.map((f) => f.op)).toEqual([
        'subscribed',
        'event',
        'event',
        'event',
        'stream_reset',
        ...incarnation.map(() => 'event'),
      ]);
      expect(liveFrames.find((f) => f.op === 'stream_reset')).toEqual({ op: 'stream_reset', stream: key, position: '0-0' });
      expect(eventIds(liveFrames)).toEqual([...old, ...incarnation]);

      const resumingFrames = about(resuming, key, 'resuming');
      expect(resumingFrames[0]).toMatchObject({ op: 'subscribed', sid: 'resuming', recovery: 'reset', position: '0-0' });
      expect(resumingFrames.slice(1).map((f) => f.op)).toEqual(incarnation.map(() => 'event'));
      expect(eventIds(resumingFrames)).toEqual(incarnation);

      // Counted and logged as a recreation, not as entries lost in a failover.
      const metrics = await relay.metrics();
      expect(metricValue(metrics, 'streamgate_relay_redis_stream_resets_total', 'cause="recreated"')).toBeGreaterThanOrEqual(1);
      expect(metricValue(metrics, 'streamgate_relay_redis_stream_resets_total', 'cause="lost_in_failover"')).toBe(0);
      expect(relay.service.lines.some((l) => l.includes('stream recreated') && l.includes('"cause":"recreated"'))).toBe(true);
    } finally {
      live.close();
      resuming.close();
    }
  });
  it('tells a subscriber that began before the key existed, when a look found it deleted before any look saw it', async () => {
    const { relay, key, redis, token } = demoStreamOn(getFleet(), 'recreated-unborn');
    const live = await openFrameLog(relay.url);
    const checks = async () => metricValue(await relay.metrics(), 'streamgate_relay_redis_reads_total', 'kind="check"');
    try {
      // Subscribed while the key is missing: no look has seen it exist when it is deleted.
      live.send({ op: 'subscribe', sid: 'unborn', token: await token('alice') });
      await live.until((fs) => fs.some((f) => f.op === 'live' && f.sid === 'unborn'), 'subscriber never went live');
      const old: string[] = [];
      for (let i = 0; i < 3; i++) old.push(String(await redis.xadd(key, '*', 'data', JSON.stringify({ old: i }))));
      await live.until((fs) => eventIds(fs).length === 3, 'subscriber never got the first incarnation');
      await redis.del(key);
      // Two periodic checks counted after the DEL: the first was sent after it, and is answered.
      const before = await checks();
      await waitFor(async () => (await checks()) >= before + 2, { timeoutMs: 30_000, message: 'no periodic check after the DEL' });
      // Written again with `*` ids: above the old ones, so no read from the position shows it.
      const fresh: string[] = [];
      for (let i = 0; i < 3; i++) fresh.push(String(await redis.xadd(key, '*', 'data', JSON.stringify({ fresh: i }))));
      await live.until((fs) => fs.some((f) => f.op === 'stream_reset' && f.stream === key), 'no stream_reset for the recreated key');
      await live.until(
        (fs) => eventIds(fs.slice(fs.findIndex((f) => f.op === 'stream_reset'))).length >= 3,
        'no new entries after the reset',
      );
      const frames = about(live, key, 'unborn');
      const reset = frames.findIndex((f) => f.op === 'stream_reset');
      expect(eventIds(frames.slice(0, reset))).toEqual(old);
      expect(eventIds(frames.slice(reset))).toEqual(fresh);
    } finally {
      live.close();
    }
  });
});

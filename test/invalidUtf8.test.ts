import { describe, expect, it } from 'vitest';
import { demoStreamOn } from './support/demoStreamOn.js';
import { useFleet } from './support/startFleet.js';
import { openFrameLog } from './support/frameLog.js';
import type { WireFrame } from './support/frameLog.js';

const getFleet = useFleet({ relays: 1 });

/** `{"s":"` + a lone continuation-less lead byte + `"}`: JSON only if decoded lossily. */
const invalid = Buffer.concat([Buffer.from('{"s":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);

const entryFrames = (frames: readonly WireFrame[]): WireFrame[] => frames.filter((f) => f.op === 'event' || f.op === 'malformed');

describe('an entry whose data is not valid UTF-8', () => {
  it('reaches live and catching-up subscribers as malformed with its id, never as a lossily decoded event', async () => {
    const { relay, key, redis, token } = demoStreamOn(getFleet(), 'not-utf8');

    const live = await openFrameLog(relay.url);
    const late = await openFrameLog(relay.url);
    try {
      live.send({ op: 'subscribe', sid: 'live', token: await token('alice') });
      await live.until((fs) => fs.some((f) => f.op === 'live'), 'live subscriber never went live');
      const before = String(await redis.xadd(key, '*', 'data', '{"s":"é"}'));
      const bad = String(await redis.xadd(key, '*', 'data', invalid));
      const after = String(await redis.xadd(key, '*', 'data', '{"s":"ü"}'));
      const expected = [
        { op: 'event', stream: key, id: before, data: { s: 'é' } },
        { op: 'malformed', stream: key, id: bad, reason: 'field "data" is not valid UTF-8' },
        { op: 'event', stream: key, id: after, data: { s: 'ü' } },
      ];
      await live.until((fs) => entryFrames(fs).length >= 3, 'live subscriber never got the three entries');
      expect(entryFrames(live.frames)).toEqual(expected);

      // From the start: the same three through a catch-up read.
      late.send({ op: 'subscribe', sid: 'late', token: await token('bob'), from: '0-0' });
      await late.until((fs) => entryFrames(fs).length >= 3, 'catching-up subscriber never got the three entries');
      expect(entryFrames(late.frames)).toEqual(expected);
    } finally {
      live.close();
      late.close();
    }
  });
});

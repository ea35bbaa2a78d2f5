import { describe, expect, it } from 'vitest';
import { expSoon, scriptedFixtures, STREAM, tokenFor, waitForValue } from '@streamgate/testkit/client';
import type { Tick } from '@streamgate/testkit/client';
import { RelayClient } from './RelayClient.js';

const { setup } = scriptedFixtures(RelayClient);

describe('RelayClient when a stream’s Redis is unavailable', () => {
  it('resubscribes on the same socket from its last id, through refusals, and resumes gap-free', async () => {
    const { r, c } = await setup();
    const seen: string[] = [];
    const errors: string[] = [];
    const sub = c.subscribe<Tick>({
      getToken: () => Promise.resolve(tokenFor<Tick>(STREAM)),
      onEvent: (_, meta) => seen.push(meta.id),
      onError: (e) => errors.push(`${e.code}:${String(e.retryable)}`),
    });
    const first = await waitForValue('subscribe', () => r.frames('subscribe')[0]);
    r.send(0, { op: 'subscribed', sid: first.sid, stream: STREAM, recovery: 'fresh', position: '1-0', exp: expSoon() });
    r.send(0, { op: 'live', sid: first.sid, position: '1-0' });
    r.send(0, { op: 'event', stream: STREAM, id: '2-0', data: { n: 2 } });
    await waitForValue('the first event', () => sub.position === '2-0');

    // The relay ended the established subscription: its target stayed unreachable.
    r.send(0, { op: 'unsubscribed', sid: first.sid, reason: 'stream_unavailable' });
    const second = await waitForValue('a resubscribe', () => r.frames('subscribe')[1]);
    expect(second.from).toBe('2-0');
    // Still down: the resubscribe is refused at once, and tried again with backoff.
    r.send(0, { op: 'error', sid: second.sid, code: 'stream_unavailable', retryable: true, message: 'redis down' });
    const third = await waitForValue('a second resubscribe', () => r.frames('subscribe')[2]);
    expect(third.from).toBe('2-0');
    r.send(0, { op: 'subscribed', sid: third.sid, stream: STREAM, recovery: 'recovered', position: '2-0', exp: expSoon() });
    r.send(0, { op: 'event', stream: STREAM, id: '3-0', data: { n: 3 } });
    r.send(0, { op: 'live', sid: third.sid, position: '3-0' });
    await waitForValue('live again', () => sub.state === 'live');
    expect(seen).toEqual(['2-0', '3-0']);
    expect(errors).toEqual(['stream_unavailable:true', 'stream_unavailable:true']);
    expect(r.sockets).toHaveLength(1);
  });
});

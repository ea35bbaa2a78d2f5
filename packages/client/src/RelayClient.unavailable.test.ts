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

describe('RelayClient when a stream moved to another Redis target', () => {
  it('subscribes again with the refreshed token, from its last id, after the relay answers stream_moved', async () => {
    const { r, c } = await setup();
    const seen: string[] = [];
    let minted = 0;
    const sub = c.subscribe<Tick>({
      getToken: () => Promise.resolve(tokenFor<Tick>(STREAM, `jwt-${++minted}`)),
      onEvent: (_, meta) => seen.push(meta.id),
    });
    const first = await waitForValue('subscribe', () => r.frames('subscribe')[0]);
    expect(first.token).toBe('jwt-1');
    r.send(0, { op: 'subscribed', sid: first.sid, stream: STREAM, recovery: 'fresh', position: '1-0', exp: expSoon() });
    r.send(0, { op: 'live', sid: first.sid, position: '1-0' });
    r.send(0, { op: 'event', stream: STREAM, id: '2-0', data: { n: 2 } });
    await waitForValue('the first event', () => sub.position === '2-0');

    // The issuer now places the stream elsewhere: the refreshed token names the new target.
    r.send(0, { op: 'refresh_token', sid: first.sid, exp: expSoon() });
    const refresh = await waitForValue('a refresh', () => r.frames('refresh')[0]);
    expect(refresh.token).toBe('jwt-2');
    r.send(0, { op: 'unsubscribed', sid: first.sid, reason: 'stream_moved' });
    const second = await waitForValue('a resubscribe', () => r.frames('subscribe')[1]);
    expect(second).toMatchObject({ token: 'jwt-2', from: '2-0' });
    // The new target holds other ids: the relay answers reset and the whole stream there.
    r.send(0, { op: 'subscribed', sid: second.sid, stream: STREAM, recovery: 'reset', position: '0-0', exp: expSoon() });
    r.send(0, { op: 'event', stream: STREAM, id: '9-0', data: { n: 9 } });
    r.send(0, { op: 'live', sid: second.sid, position: '9-0' });
    await waitForValue('live on the new target', () => sub.state === 'live' && sub.position === '9-0');
    expect(seen).toEqual(['2-0', '9-0']);
    expect(r.sockets).toHaveLength(1);
  });
});

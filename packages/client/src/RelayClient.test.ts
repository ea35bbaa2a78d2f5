import { describe, expect, expectTypeOf, it } from 'vitest';
import type { StreamId } from '@streamgate/protocol';
import { scriptedFixtures, STREAM, tokenFor, waitForValue } from '@streamgate/testkit/client';
import type { Tick } from '@streamgate/testkit/client';
import { RelayClient } from './RelayClient.js';
import type { SubscriptionState } from './types.js';

const { relay, client } = scriptedFixtures(RelayClient);

function subscribed(position: StreamId, recovery: 'fresh' | 'recovered' | 'truncated' | 'reset', sid: string) {
  return { op: 'subscribed', sid, stream: STREAM, recovery, position, exp: Math.floor(Date.now() / 1000) + 600 } as const;
}

function event(id: StreamId, n: number) {
  return { op: 'event', stream: STREAM, id, data: { n } } as const;
}

describe('RelayClient against a scripted relay', () => {
  it('subscribes, catches up, goes live, and types events from the token', async () => {
    const r = await relay();
    const seen: Array<[number, StreamId]> = [];
    const states: SubscriptionState[] = [];
    const sub = client([r.url]).subscribe({
      getToken: () => Promise.resolve(tokenFor<Tick>(STREAM)),
      from: '5-0',
      onEvent: (data, meta) => {
        expectTypeOf(data).toEqualTypeOf<Tick>();
        seen.push([data.n, meta.id]);
      },
      onStateChange: (state) => states.push(state),
    });
    expect(sub.state).toBe('connecting');

    const [frame] = await waitForValue('a subscribe frame', () => r.frames('subscribe').length > 0 && r.frames('subscribe'));
    expect(frame).toEqual({ op: 'subscribe', sid: frame?.sid, token: 'jwt-1', from: '5-0' });
    const sid = frame?.sid ?? '';
    r.send(0, subscribed('5-0', 'recovered', sid));
    await waitForValue('catching-up', () => sub.state === 'catching-up');
    r.send(0, event('6-0', 6));
    r.send(0, event('7-0', 7));
    r.send(0, { op: 'live', sid, position: '7-0' });
    await waitForValue('live', () => sub.state === 'live');

    expect(seen).toEqual([
      [6, '6-0'],
      [7, '7-0'],
    ]);
    expect(states).toEqual(['catching-up', 'live']);
    expect(sub.position).toBe('7-0');
    expect(sub.stream).toBe(STREAM);
  });

  it('resumes from the last id after the relay drops the socket, ignoring duplicates', async () => {
    const r = await relay();
    const seen: number[] = [];
    const sub = client([r.url]).subscribe({
      getToken: () => Promise.resolve(tokenFor<Tick>(STREAM)),
      onEvent: (data) => seen.push(data.n),
    });
    const first = await waitForValue('first subscribe', () => r.frames('subscribe', 0)[0]);
    expect(first.from).toBeUndefined();
    r.send(0, subscribed('0-0', 'fresh', first.sid));
    r.send(0, event('1-0', 1));
    r.send(0, event('2-0', 2));
    await waitForValue('two events', () => seen.length === 2);

    r.sockets[0]?.terminate();
    const again = await waitForValue('subscribe on a second socket', () => r.frames('subscribe', 1)[0]);
    expect(again.from).toBe('2-0');
    expect(sub.state).toBe('connecting');
    r.send(1, subscribed('2-0', 'recovered', again.sid));
    r.send(1, event('2-0', 2));
    r.send(1, event('3-0', 3));
    r.send(1, { op: 'live', sid: again.sid, position: '3-0' });
    await waitForValue('live again', () => sub.state === 'live');

    expect(seen).toEqual([1, 2, 3]);
    expect(sub.duplicatesIgnored).toBe(1);
  });

  it('does not reconnect after 4400 and closes subscriptions with a typed error', async () => {
    const r = await relay();
    const c = client([r.url]);
    const errors: unknown[] = [];
    const states: SubscriptionState[] = [];
    const sub = c.subscribe({
      getToken: () => Promise.resolve(tokenFor<Tick>(STREAM)),
      onEvent: () => undefined,
      onError: (e) => errors.push(e),
      onStateChange: (state) => states.push(state),
    });
    const [frame] = await waitForValue('subscribe', () => r.frames('subscribe').length > 0 && r.frames('subscribe'));
    r.send(0, subscribed('1-0', 'fresh', frame?.sid ?? ''));
    await waitForValue('live', () => sub.state === 'live');
    r.sockets[0]?.close(4400, 'protocol violation');

    await waitForValue('closed', () => sub.state === 'closed');
    // Straight from live to closed: a halting close is no reconnect, so never `connecting`.
    expect(states).toEqual(['live', 'closed']);
    expect(c.status).toBe('halted');
    expect(sub.error).toMatchObject({ code: 'connection_closed', retryable: false });
    expect(errors).toHaveLength(1);
    expect(r.sockets).toHaveLength(1);
  });

  it('on a drain notice reconnects at once to the next URL and resumes from the later position', async () => {
    const a = await relay();
    const b = await relay();
    // A backoff this long would fail the deadline: only an immediate reconnect passes.
    const c = client([a.url, b.url], { backoff: { baseMs: 60_000, maxMs: 60_000 } });
    const sub = c.subscribe({ getToken: () => Promise.resolve(tokenFor<Tick>(STREAM)), onEvent: () => undefined });
    const first = await waitForValue('subscribe on A', () => a.frames('subscribe')[0]);
    a.send(0, subscribed('0-0', 'fresh', first.sid));
    a.send(0, event('7-0', 7));
    await waitForValue('event', () => sub.position === '7-0');

    a.send(0, { op: 'reconnect', reason: 'drain', positions: [{ sid: first.sid, stream: STREAM, id: '9-0' }] });
    const onB = await waitForValue('subscribe on B', () => b.frames('subscribe')[0], { timeoutMs: 2_000 });
    expect(onB.from).toBe('9-0');
    expect(c.url).toBe(b.url);
    expect(a.sockets).toHaveLength(1);
  });

  it('on a drain notice resumes on the next pod with the token it holds: no token request', async () => {
    const a = await relay();
    const b = await relay();
    const c = client([a.url, b.url], { backoff: { baseMs: 60_000, maxMs: 60_000 } });
    let tokenRequests = 0;
    c.subscribe({
      getToken: () => {
        tokenRequests += 1;
        return Promise.resolve(tokenFor<Tick>(STREAM, `jwt-${tokenRequests}`));
      },
      onEvent: () => undefined,
    });
    const first = await waitForValue('subscribe on A', () => a.frames('subscribe')[0]);
    a.send(0, subscribed('0-0', 'fresh', first.sid));
    a.send(0, { op: 'reconnect', reason: 'drain', positions: [{ sid: first.sid, stream: STREAM, id: '0-0' }], sinceDrainMs: 1234 });
    const onB = await waitForValue('subscribe on B', () => b.frames('subscribe')[0], { timeoutMs: 2_000 });
    expect(onB.token).toBe('jwt-1');
    expect(tokenRequests).toBe(1);
  });

  it('sent away with 4002 (pod draining), goes to the next URL at once', async () => {
    const a = await relay();
    const b = await relay();
    // A backoff this long would fail the deadline: only an immediate reconnect passes.
    const c = client([a.url, b.url], { backoff: { baseMs: 60_000, maxMs: 60_000 } });
    c.subscribe({ getToken: () => Promise.resolve(tokenFor<Tick>(STREAM)), onEvent: () => undefined });
    await waitForValue('a socket on A', () => a.sockets[0]);
    a.sockets[0]?.close(4002, 'relay draining: connect to another pod');
    const onB = await waitForValue('subscribe on B', () => b.frames('subscribe')[0], { timeoutMs: 2_000 });
    expect(onB.from).toBeUndefined();
    expect(c.url).toBe(b.url);
    expect(a.sockets).toHaveLength(1);
  });

  it('reports an unparseable frame without dropping the connection', async () => {
    const r = await relay();
    const connectionErrors: string[] = [];
    const c = client([r.url], { onError: (e) => connectionErrors.push(e.code) });
    const seen: number[] = [];
    c.subscribe({ getToken: () => Promise.resolve(tokenFor<Tick>(STREAM)), onEvent: (d) => seen.push(d.n) });
    const frame = await waitForValue('subscribe', () => r.frames('subscribe')[0]);
    r.sendRaw(0, '{not json');
    r.sendRaw(0, JSON.stringify({ op: 'event', stream: STREAM }));
    r.send(0, subscribed('0-0', 'fresh', frame.sid));
    r.send(0, event('1-0', 1));
    await waitForValue('the event after the bad frames', () => seen.length === 1);
    expect(connectionErrors).toEqual(['frame_not_json', 'frame_invalid']);
    expect(c.status).toBe('open');
  });
});

import { describe, expect, it } from 'vitest';
import type { RelaySubscription } from '@streamgate/protocol';
import { deferred, expSoon, scriptedFixtures, STREAM, tokenFor, waitForValue } from '@streamgate/testkit/client';
import type { Tick } from '@streamgate/testkit/client';
import { RelayClient } from './RelayClient.js';
import type { SubscriptionError } from './types.js';

const exp = expSoon;
const { setup } = scriptedFixtures(RelayClient);

describe('RelayClient tokens', () => {
  it('answers refresh_token with exactly one getToken call and one refresh frame', async () => {
    const { r, c } = await setup();
    const calls: Array<ReturnType<typeof deferred<RelaySubscription<Tick>>>> = [];
    const sub = c.subscribe({
      getToken: () => {
        if (calls.length === 0) {
          calls.push(deferred());
          return Promise.resolve(tokenFor<Tick>(STREAM, 'jwt-1'));
        }
        const d = deferred<RelaySubscription<Tick>>();
        calls.push(d);
        return d.promise;
      },
      onEvent: () => undefined,
    });
    const { sid } = await waitForValue('subscribe', () => r.frames('subscribe')[0]);
    r.send(0, { op: 'subscribed', sid, stream: STREAM, recovery: 'fresh', position: '0-0', exp: exp() });
    await waitForValue('live', () => sub.state === 'live');

    // Two notices while the first refresh is still waiting for its token.
    r.send(0, { op: 'refresh_token', sid, exp: exp() });
    r.send(0, { op: 'refresh_token', sid, exp: exp() });
    // Frames are handled in order: once this event is seen, both notices were handled too.
    r.send(0, { op: 'event', stream: STREAM, id: '1-0', data: { n: 1 } });
    await waitForValue('the event sent after both notices', () => sub.position === '1-0');
    expect(calls).toHaveLength(2);
    calls[1]?.resolve(tokenFor<Tick>(STREAM, 'jwt-2'));

    const [refresh] = await waitForValue('a refresh frame', () => r.frames('refresh').length > 0 && r.frames('refresh'));
    expect(refresh).toEqual({ op: 'refresh', sid, token: 'jwt-2' });
    expect(calls).toHaveLength(2);

    // After `refreshed`, the next notice starts a new refresh.
    r.send(0, { op: 'refreshed', sid, exp: exp() });
    r.send(0, { op: 'refresh_token', sid, exp: exp() });
    await waitForValue('a second refresh getToken call', () => calls.length === 3);
    expect(r.frames('refresh')).toHaveLength(1);
  });

  it('keeps one getToken call in flight for a refresh across a reconnect', async () => {
    const { r, c } = await setup();
    const calls: Array<ReturnType<typeof deferred<RelaySubscription<Tick>>>> = [];
    const sub = c.subscribe({
      getToken: () => {
        const d = deferred<RelaySubscription<Tick>>();
        calls.push(d);
        if (calls.length === 1) d.resolve(tokenFor<Tick>(STREAM, 'jwt-1'));
        return d.promise;
      },
      onEvent: () => undefined,
    });
    const first = await waitForValue('subscribe', () => r.frames('subscribe')[0]);
    r.send(0, { op: 'subscribed', sid: first.sid, stream: STREAM, recovery: 'fresh', position: '0-0', exp: exp() });
    await waitForValue('live', () => sub.state === 'live');
    r.send(0, { op: 'refresh_token', sid: first.sid, exp: exp() });
    await waitForValue('the refresh getToken call', () => calls.length === 2);

    // The socket drops while the backend is still minting; the new socket asks again.
    r.sockets[0]?.terminate();
    const second = await waitForValue('resubscribe', () => r.frames('subscribe', 1)[0]);
    r.send(1, { op: 'subscribed', sid: second.sid, stream: STREAM, recovery: 'recovered', position: '0-0', exp: exp() });
    r.send(1, { op: 'refresh_token', sid: second.sid, exp: exp() });
    r.send(1, { op: 'event', stream: STREAM, id: '1-0', data: { n: 1 } });
    await waitForValue('the event sent after the notice', () => sub.position === '1-0');
    expect(calls).toHaveLength(2);

    calls[1]?.resolve(tokenFor<Tick>(STREAM, 'jwt-2'));
    const [refresh] = await waitForValue('a refresh on the new socket', () => r.frames('refresh', 1).length > 0 && r.frames('refresh', 1));
    expect(refresh).toEqual({ op: 'refresh', sid: second.sid, token: 'jwt-2' });
    expect(calls).toHaveLength(2);
  });

  it('closes the subscription with the typed error on a token error', async () => {
    const { r, c } = await setup();
    const errors: SubscriptionError[] = [];
    const sub = c.subscribe({
      getToken: () => Promise.resolve(tokenFor<Tick>(STREAM)),
      onEvent: () => undefined,
      onError: (e) => errors.push(e),
    });
    const { sid } = await waitForValue('subscribe', () => r.frames('subscribe')[0]);
    r.send(0, { op: 'error', sid, code: 'token_expired', retryable: false, message: 'token expired' });

    await waitForValue('closed', () => sub.state === 'closed');
    const expected = { code: 'token_expired', retryable: false, message: 'token expired' };
    expect(sub.error).toEqual(expected);
    expect(errors).toEqual([expected]);
    expect(c.status).toBe('open');
    expect(r.frames('subscribe')).toHaveLength(1);
  });

  it('re-subscribes after a retryable error', async () => {
    const { r, c } = await setup();
    const errors: string[] = [];
    const sub = c.subscribe({
      getToken: () => Promise.resolve(tokenFor<Tick>(STREAM)),
      onEvent: () => undefined,
      onError: (e) => errors.push(e.code),
    });
    const first = await waitForValue('subscribe', () => r.frames('subscribe')[0]);
    r.send(0, { op: 'error', sid: first.sid, code: 'stream_unavailable', retryable: true, message: 'redis down' });
    const second = await waitForValue('a second subscribe', () => r.frames('subscribe')[1]);
    expect(second.sid).not.toBe(first.sid);
    r.send(0, { op: 'subscribed', sid: second.sid, stream: STREAM, recovery: 'fresh', position: '1-0', exp: exp() });
    await waitForValue('live', () => sub.state === 'live');
    expect(errors).toEqual(['stream_unavailable']);
  });

  it('uses a token that came with 30 s or less to live as it came, at start and on a resume', async () => {
    const { r, c } = await setup();
    let calls = 0;
    // A backend minting 20 s tokens has no longer one: asking again would only ask twice (and a
    // second answer could refuse what the first allowed).
    c.subscribe({
      getToken: () => Promise.resolve(tokenFor<Tick>(STREAM, `jwt-${++calls}`, 20_000)),
      onEvent: () => undefined,
    });
    const first = await waitForValue('subscribe', () => r.frames('subscribe')[0]);
    expect(first.token).toBe('jwt-1');
    r.send(0, { op: 'subscribed', sid: first.sid, stream: STREAM, recovery: 'fresh', position: '1-0', exp: exp() });
    r.sockets[0]?.terminate();
    // Its renewal moment (the lead capped at half its life) has not come: the resume reuses it.
    const second = await waitForValue('resubscribe', () => r.frames('subscribe', 1)[0]);
    expect(second.token).toBe('jwt-1');
    expect(calls).toBe(1);
  });

  it('closes a subscription whose getToken returns something that is not a token', async () => {
    const { c } = await setup();
    const sub = c.subscribe({
      getToken: () => Promise.resolve({ token: '', stream: STREAM, expiresAt: 0 } as RelaySubscription<Tick>),
      onEvent: () => undefined,
      onError: () => undefined,
    });
    await waitForValue('closed', () => sub.state === 'closed');
    expect(sub.error?.code).toBe('token_response_invalid');
  });

  it('ends a subscription whose token request the backend refused, and retries one that failed otherwise', async () => {
    const { c } = await setup();
    /** What a tRPC client error carries for a procedure that threw FORBIDDEN. */
    const forbidden = Object.assign(new Error('not your order'), { data: { code: 'FORBIDDEN', httpStatus: 403 } });
    let refusedCalls = 0;
    const errors: SubscriptionError[] = [];
    const refused = c.subscribe({
      getToken: () => {
        refusedCalls++;
        return Promise.reject(forbidden);
      },
      onEvent: () => undefined,
      onError: (e) => errors.push(e),
    });
    await waitForValue('closed', () => refused.state === 'closed');
    expect(refused.error).toEqual({ code: 'token_fetch_failed', retryable: false, message: 'not your order' });
    expect(errors).toEqual([refused.error]);

    // A 503, a 429 and an error without a status are worth asking again.
    const transient = [
      Object.assign(new Error('auth is down'), { data: { httpStatus: 503 } }),
      Object.assign(new Error('slow down'), { data: { httpStatus: 429 } }),
      new Error('fetch failed'),
    ];
    let calls = 0;
    const retried = c.subscribe({
      getToken: () => {
        const failure = transient[calls++];
        return failure === undefined ? Promise.resolve(tokenFor<Tick>('other:stream')) : Promise.reject(failure);
      },
      onEvent: () => undefined,
      onError: () => undefined,
    });
    await waitForValue('asked four times', () => calls === 4);
    expect(retried.state).not.toBe('closed');
    expect(refusedCalls).toBe(1);
  });
});

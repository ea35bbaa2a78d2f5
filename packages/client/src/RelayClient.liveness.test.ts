import { describe, expect, it } from 'vitest';
import { CloseCode } from '@streamgate/protocol';
import { expSoon, scriptedFixtures, STREAM, tokenFor, waitForValue } from '@streamgate/testkit/client';
import type { Tick } from '@streamgate/testkit/client';
import { RelayClient } from './RelayClient.js';
import type { SubscriptionError } from './types.js';
import { ManualClock } from '@streamgate/protocol/testing';

const { relay, client } = scriptedFixtures(RelayClient);

describe('RelayClient liveness and request deadlines', () => {
  it("answers the relay's ping with a pong", async () => {
    const r = await relay();
    client([r.url]).subscribe({ getToken: () => Promise.resolve(tokenFor<Tick>(STREAM)), onEvent: () => undefined });
    await waitForValue('subscribe', () => r.frames('subscribe', 0)[0]);
    r.send(0, { op: 'ping' });
    const pong = await waitForValue('a pong', () => r.frames('pong', 0)[0]);
    expect(pong).toEqual({ op: 'pong' });
  });

  it('gives up a socket that heard nothing for the ping interval plus the grace and resumes on the next URL', async () => {
    const a = await relay();
    const b = await relay();
    const clock = new ManualClock(Date.now());
    const c = client([a.url, b.url], { clock, livenessGraceMs: 500 });
    const seen: number[] = [];
    const sub = c.subscribe({ getToken: () => Promise.resolve(tokenFor<Tick>(STREAM)), onEvent: (data) => seen.push(data.n) });
    const first = await waitForValue('subscribe on a', () => a.frames('subscribe', 0)[0]);
    a.send(0, { op: 'welcome', protocol: 1, node: 'a', limits: { maxFrameBytes: 65_536, maxSubscriptions: 100 }, pingIntervalMs: 1000 });
    a.send(0, { op: 'subscribed', sid: first.sid, stream: STREAM, recovery: 'fresh', position: '0-0', exp: expSoon() });
    a.send(0, { op: 'event', stream: STREAM, id: '1-0', data: { n: 1 } });
    await waitForValue('one event', () => seen.length === 1);
    // Still within the bound: the socket stays.
    clock.advanceSync(1499);
    expect(b.sockets).toHaveLength(0);
    // a goes silent without closing; once 1000 + 500 ms pass the client leaves for b.
    clock.advanceSync(1);
    const again = await waitForValue('subscribe on b', () => b.frames('subscribe', 0)[0]);
    expect(again.from).toBe('1-0');
    const closeCode = await waitForValue('a sees the close', () => a.closes[0]);
    expect(closeCode).toBe(CloseCode.pingTimeout);
    b.send(0, { op: 'subscribed', sid: again.sid, stream: STREAM, recovery: 'recovered', position: '1-0', exp: expSoon() });
    b.send(0, { op: 'event', stream: STREAM, id: '2-0', data: { n: 2 } });
    await waitForValue('the next event from b', () => seen.length === 2);
    expect(seen).toEqual([1, 2]);
    expect(sub.state).toBe('catching-up');
  });

  it('sends an unanswered subscribe again, withdrawing the first', async () => {
    const r = await relay();
    const clock = new ManualClock(Date.now());
    const errors: SubscriptionError[] = [];
    const connectionErrors: string[] = [];
    const sub = client([r.url], { clock, requestTimeoutMs: 2000, onError: (e) => connectionErrors.push(e.code) }).subscribe({
      getToken: () => Promise.resolve(tokenFor<Tick>(STREAM)),
      onEvent: () => undefined,
      onError: (e) => errors.push(e),
    });
    const first = await waitForValue('first subscribe', () => r.frames('subscribe', 0)[0]);
    clock.advanceSync(1999);
    expect(r.frames('subscribe', 0)).toHaveLength(1);
    clock.advanceSync(1);
    const withdrawn = await waitForValue('an unsubscribe of the first', () => r.frames('unsubscribe', 0)[0]);
    expect(withdrawn.sid).toBe(first.sid);
    expect(errors.map((e) => e.code)).toEqual(['request_timeout']);
    // The relay had never heard of the first: its answer to the withdrawal is nothing to report.
    r.send(0, { op: 'error', code: 'unknown_subscription', retryable: false, message: 'no subscription', sid: first.sid });
    const second = await waitForValue('a second subscribe', () => r.frames('subscribe', 0)[1]);
    expect(second.sid).not.toBe(first.sid);
    r.send(0, { op: 'subscribed', sid: second.sid, stream: STREAM, recovery: 'fresh', position: '0-0', exp: expSoon() });
    await waitForValue('live', () => sub.state === 'live');
    expect(connectionErrors).toEqual([]);
    expect(errors.map((e) => e.code)).toEqual(['request_timeout']);
    // Answered: the deadline is gone.
    clock.advanceSync(10_000);
    expect(r.frames('subscribe', 0)).toHaveLength(2);
  });

  it('sends an unanswered refresh again', async () => {
    const r = await relay();
    const clock = new ManualClock(Date.now());
    let minted = 0;
    const errors: SubscriptionError[] = [];
    client([r.url], { clock, requestTimeoutMs: 2000 }).subscribe({
      getToken: () => Promise.resolve(tokenFor<Tick>(STREAM, `jwt-${++minted}`)),
      onEvent: () => undefined,
      onError: (e) => errors.push(e),
    });
    const sub = await waitForValue('subscribe', () => r.frames('subscribe', 0)[0]);
    r.send(0, { op: 'subscribed', sid: sub.sid, stream: STREAM, recovery: 'fresh', position: '0-0', exp: expSoon() });
    r.send(0, { op: 'refresh_token', sid: sub.sid, exp: expSoon() });
    await waitForValue('a refresh', () => r.frames('refresh', 0)[0]);
    clock.advanceSync(2000);
    await waitForValue('the refresh sent again', () => r.frames('refresh', 0)[1]);
    expect(errors.map((e) => e.code)).toEqual(['request_timeout']);
    r.send(0, { op: 'refreshed', sid: sub.sid, exp: expSoon() });
    await new Promise((resolve) => setImmediate(resolve));
    clock.advanceSync(10_000);
    expect(r.frames('refresh', 0)).toHaveLength(2);
  });
});

import { describe, expect, it } from 'vitest';
import { expSoon, scriptedFixtures, STREAM, tokenFor, waitForValue } from '@streamgate/testkit/client';
import type { Tick } from '@streamgate/testkit/client';
import { RelayClient } from './RelayClient.js';
import type { RecoveryInfo, SubscriptionError, SubscriptionState } from './types.js';

const exp = expSoon;
const { setup } = scriptedFixtures(RelayClient);

describe('RelayClient stream routing', () => {
  it('multiplexes two app subscriptions to one stream onto one relay subscription', async () => {
    const { r, c } = await setup();
    const a: number[] = [];
    const b: number[] = [];
    const getToken = () => Promise.resolve(tokenFor<Tick>(STREAM));
    const subA = c.subscribe({ getToken, onEvent: (d) => a.push(d.n) });
    const { sid } = await waitForValue('subscribe', () => r.frames('subscribe')[0]);
    r.send(0, { op: 'subscribed', sid, stream: STREAM, recovery: 'fresh', position: '1-0', exp: exp() });
    await waitForValue('A live', () => subA.state === 'live');
    const subB = c.subscribe({ getToken, onEvent: (d) => b.push(d.n) });
    await waitForValue('B joined live', () => subB.state === 'live');

    r.send(0, { op: 'event', stream: STREAM, id: '2-0', data: { n: 2 } });
    await waitForValue('both saw the event', () => a.length === 1 && b.length === 1);
    expect(r.frames('subscribe')).toHaveLength(1);

    subA.unsubscribe();
    r.send(0, { op: 'event', stream: STREAM, id: '3-0', data: { n: 3 } });
    await waitForValue('B saw the next event', () => b.length === 2);
    expect(a).toEqual([2]);
    expect(r.frames('unsubscribe')).toHaveLength(0);

    subB.unsubscribe();
    await waitForValue('an unsubscribe frame', () => r.frames('unsubscribe')[0]);
    expect(r.frames('unsubscribe')).toEqual([{ op: 'unsubscribe', sid }]);
    expect([subA.state, subB.state]).toEqual(['closed', 'closed']);
  });

  it('restarts the relay subscription when a joiner asks for an earlier position', async () => {
    const { r, c } = await setup();
    const a: number[] = [];
    const b: number[] = [];
    const getToken = () => Promise.resolve(tokenFor<Tick>(STREAM));
    const subA = c.subscribe({ getToken, from: '5-0', onEvent: (d) => a.push(d.n) });
    const first = await waitForValue('subscribe', () => r.frames('subscribe')[0]);
    r.send(0, { op: 'subscribed', sid: first.sid, stream: STREAM, recovery: 'recovered', position: '5-0', exp: exp() });
    r.send(0, { op: 'live', sid: first.sid, position: '5-0' });
    await waitForValue('A live', () => subA.state === 'live');

    c.subscribe({ getToken, from: '3-0', onEvent: (d) => b.push(d.n) });
    const second = await waitForValue('a second subscribe', () => r.frames('subscribe')[1]);
    expect(r.frames('unsubscribe')).toEqual([{ op: 'unsubscribe', sid: first.sid }]);
    expect(second.from).toBe('3-0');
    r.send(0, { op: 'subscribed', sid: second.sid, stream: STREAM, recovery: 'recovered', position: '3-0', exp: exp() });
    for (const n of [4, 5, 6]) r.send(0, { op: 'event', stream: STREAM, id: `${n}-0`, data: { n } });
    await waitForValue('B caught up', () => b.length === 3);
    expect(b).toEqual([4, 5, 6]);
    expect(a).toEqual([6]);
    expect(subA.duplicatesIgnored).toBe(2);
  });

  it.each([
    ['the oldest retained entry is one it has', '6-0', []],
    ['entries after its own position were trimmed too', '8-0', [{ recovery: 'truncated', previousPosition: '6-0', position: '6-0' }]],
  ])('tells a subscriber ahead of a joiner’s truncated resume only what it lost: %s', async (_, oldest, lostToA) => {
    const { r, c } = await setup();
    const a: number[] = [];
    const b: number[] = [];
    const aRecoveries: RecoveryInfo[] = [];
    const bRecoveries: RecoveryInfo[] = [];
    const getToken = () => Promise.resolve(tokenFor<Tick>(STREAM));
    const subA = c.subscribe({ getToken, from: '5-0', onEvent: (d) => a.push(d.n), onRecovery: (i) => aRecoveries.push(i) });
    const first = await waitForValue('subscribe', () => r.frames('subscribe')[0]);
    r.send(0, { op: 'subscribed', sid: first.sid, stream: STREAM, recovery: 'recovered', position: '5-0', exp: exp() });
    r.send(0, { op: 'event', stream: STREAM, id: '6-0', data: { n: 6 } });
    r.send(0, { op: 'live', sid: first.sid, position: '6-0' });
    await waitForValue('A live', () => subA.state === 'live');

    // B asks for history older than Redis keeps: the shared resume answers truncated.
    c.subscribe({ getToken, from: '1-0', onEvent: (d) => b.push(d.n), onRecovery: (i) => bRecoveries.push(i) });
    const second = await waitForValue('a second subscribe', () => r.frames('subscribe')[1]);
    r.send(0, { op: 'subscribed', sid: second.sid, stream: STREAM, recovery: 'truncated', position: '1-0', exp: exp() });
    const oldestN = Number(oldest.split('-')[0]);
    for (let n = oldestN; n <= 9; n++) r.send(0, { op: 'event', stream: STREAM, id: `${n}-0`, data: { n } });
    r.send(0, { op: 'live', sid: second.sid, position: '9-0' });
    await waitForValue('both live', () => subA.state === 'live' && b.at(-1) === 9);

    expect(bRecoveries).toEqual([{ recovery: 'truncated', previousPosition: '1-0', position: '1-0', stream: STREAM }]);
    expect(aRecoveries).toEqual(lostToA.map((l) => ({ ...l, stream: STREAM })));
    // Each once: A's 6 is not delivered again.
    expect(a).toEqual([6, ...Array.from({ length: 10 - Math.max(7, oldestN) }, (_, i) => Math.max(7, oldestN) + i)]);
  });

  it('gives a joiner without `from` nothing of another one’s catch-up: it starts at live', async () => {
    const { r, c } = await setup();
    const fresh: number[] = [];
    const getToken = () => Promise.resolve(tokenFor<Tick>(STREAM));
    c.subscribe({ getToken, from: '2-0', onEvent: () => undefined });
    const subF = c.subscribe({ getToken, onEvent: (d) => fresh.push(d.n) });
    const { sid } = await waitForValue('subscribe', () => r.frames('subscribe')[0]);
    r.send(0, { op: 'subscribed', sid, stream: STREAM, recovery: 'recovered', position: '2-0', exp: exp() });
    for (const n of [3, 4]) r.send(0, { op: 'event', stream: STREAM, id: `${n}-0`, data: { n } });
    r.send(0, { op: 'live', sid, position: '4-0' });
    r.send(0, { op: 'event', stream: STREAM, id: '5-0', data: { n: 5 } });
    await waitForValue('the fresh one saw the next entry', () => fresh.length > 0);
    expect(fresh).toEqual([5]);
    expect(subF.position).toBe('5-0');
  });

  it('advances the position on a malformed entry and reports it', async () => {
    const { r, c } = await setup();
    const errors: SubscriptionError[] = [];
    const sub = c.subscribe({
      getToken: () => Promise.resolve(tokenFor<Tick>(STREAM)),
      onEvent: () => undefined,
      onError: (e) => errors.push(e),
    });
    const { sid } = await waitForValue('subscribe', () => r.frames('subscribe')[0]);
    r.send(0, { op: 'subscribed', sid, stream: STREAM, recovery: 'fresh', position: '1-0', exp: exp() });
    r.send(0, { op: 'malformed', stream: STREAM, id: '2-0', reason: 'entry has no "data" field' });
    await waitForValue('position advanced', () => sub.position === '2-0');
    expect(errors).toEqual([{ code: 'malformed_entry', retryable: false, message: 'entry has no "data" field', id: '2-0' }]);
    expect(sub.state).toBe('live');
  });

  it('goes unrecovered on a truncated resume, tells the app, and keeps delivering', async () => {
    const { r, c } = await setup();
    const recoveries: RecoveryInfo[] = [];
    const states: SubscriptionState[] = [];
    const seen: number[] = [];
    const sub = c.subscribe({
      getToken: () => Promise.resolve(tokenFor<Tick>(STREAM)),
      from: '2-0',
      onEvent: (d) => seen.push(d.n),
      onRecovery: (info) => recoveries.push(info),
      onStateChange: (s) => states.push(s),
    });
    const { sid } = await waitForValue('subscribe', () => r.frames('subscribe')[0]);
    r.send(0, { op: 'subscribed', sid, stream: STREAM, recovery: 'truncated', position: '9-0', exp: exp() });
    r.send(0, { op: 'event', stream: STREAM, id: '10-0', data: { n: 10 } });
    r.send(0, { op: 'live', sid, position: '10-0' });
    await waitForValue('live', () => sub.state === 'live');

    expect(recoveries).toEqual([{ recovery: 'truncated', previousPosition: '2-0', position: '9-0', stream: STREAM }]);
    expect(states).toEqual(['unrecovered', 'live']);
    expect(seen).toEqual([10]);
  });

  it('accepts lower ids after a reset (the stream was recreated)', async () => {
    const { r, c } = await setup();
    const seen: number[] = [];
    const sub = c.subscribe({
      getToken: () => Promise.resolve(tokenFor<Tick>(STREAM)),
      from: '500-0',
      onEvent: (d) => seen.push(d.n),
      onRecovery: () => undefined,
    });
    const { sid } = await waitForValue('subscribe', () => r.frames('subscribe')[0]);
    r.send(0, { op: 'subscribed', sid, stream: STREAM, recovery: 'reset', position: '0-0', exp: exp() });
    await waitForValue('unrecovered', () => sub.state === 'unrecovered');
    r.send(0, { op: 'event', stream: STREAM, id: '1-0', data: { n: 1 } });
    await waitForValue('the event', () => seen.length === 1);
    expect(sub.position).toBe('1-0');
  });
});

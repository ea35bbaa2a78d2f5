import { describe, expect, it } from 'vitest';
import type { StreamId } from '@streamgate/protocol';
import { expSoon, scriptedFixtures, STREAM, tokenFor, waitForValue } from '@streamgate/testkit/client';
import type { Tick } from '@streamgate/testkit/client';
import { RelayClient } from './RelayClient.js';
import type { ResetInfo, SubscriptionError } from './types.js';

const { relay, client, setup } = scriptedFixtures(RelayClient);

const event = (id: StreamId, n: number) => ({ op: 'event', stream: STREAM, id, data: { n } }) as const;

describe('RelayClient on stream_reset (the stream was recreated while subscribed)', () => {
  it('tells the app first, then delivers the new incarnation’s lower ids, each once, in order', async () => {
    const r = await relay();
    const connectionErrors: string[] = [];
    const c = client([r.url], { onError: (e) => connectionErrors.push(e.code) });
    const log: string[] = [];
    const resets: ResetInfo[] = [];
    const errors: SubscriptionError[] = [];
    const sub = c.subscribe({
      getToken: () => Promise.resolve(tokenFor<Tick>(STREAM)),
      onEvent: (d, meta) => log.push(`${d.n}@${meta.id}`),
      onReset: (info) => {
        resets.push(info);
        log.push('reset');
      },
      onError: (e) => errors.push(e),
    });
    const { sid } = await waitForValue('subscribe', () => r.frames('subscribe')[0]);
    r.send(0, { op: 'subscribed', sid, stream: STREAM, recovery: 'fresh', position: '5-0', exp: expSoon() });
    r.send(0, { op: 'live', sid, position: '5-0' });
    r.send(0, event('6-0', 6));
    r.send(0, event('7-0', 7));
    await waitForValue('the old incarnation', () => sub.position === '7-0');

    r.send(0, { op: 'stream_reset', stream: STREAM, position: '0-0' });
    for (const [i, id] of (['1-1', '1-2', '1-3', '1-4', '2-0'] as const).entries()) r.send(0, event(id, 100 + i));
    await waitForValue('the new incarnation', () => sub.position === '2-0');

    expect(log).toEqual(['6@6-0', '7@7-0', 'reset', '100@1-1', '101@1-2', '102@1-3', '103@1-4', '104@2-0']);
    expect(resets).toEqual([{ stream: STREAM, previousPosition: '7-0', position: '0-0' }]);
    expect(sub.duplicatesIgnored).toBe(0);
    expect(sub.state).toBe('live');
    expect(errors).toEqual([]);
    expect(connectionErrors).toEqual([]);
  });

  it('resets every subscription sharing the stream, and a later resume starts from the new incarnation', async () => {
    const { r, c } = await setup();
    const a: number[] = [];
    const b: number[] = [];
    const resets: Array<StreamId | undefined> = [];
    const getToken = () => Promise.resolve(tokenFor<Tick>(STREAM));
    const subA = c.subscribe({ getToken, onEvent: (d) => a.push(d.n), onReset: (i) => resets.push(i.previousPosition) });
    const first = await waitForValue('subscribe', () => r.frames('subscribe')[0]);
    r.send(0, { op: 'subscribed', sid: first.sid, stream: STREAM, recovery: 'fresh', position: '9-0', exp: expSoon() });
    await waitForValue('A live', () => subA.state === 'live');
    const subB = c.subscribe({ getToken, onEvent: (d) => b.push(d.n), onReset: (i) => resets.push(i.previousPosition) });
    await waitForValue('B live', () => subB.state === 'live');

    r.send(0, { op: 'stream_reset', stream: STREAM, position: '0-0' });
    r.send(0, event('1-0', 1));
    r.send(0, event('2-0', 2));
    await waitForValue('both saw the new entries', () => a.length === 2 && b.length === 2);
    expect([a, b]).toEqual([
      [1, 2],
      [1, 2],
    ]);
    expect(resets).toEqual(['9-0', '9-0']);

    // The last id became the reset's position and then moved on: the resume asks from there.
    r.sockets[0]?.terminate();
    const again = await waitForValue('resubscribe', () => r.frames('subscribe', 1)[0]);
    expect(again.from).toBe('2-0');
  });

  it('ignores a reset for a stream it does not subscribe to', async () => {
    const { r, c } = await setup();
    const seen: number[] = [];
    const resets: ResetInfo[] = [];
    const sub = c.subscribe({
      getToken: () => Promise.resolve(tokenFor<Tick>(STREAM)),
      onEvent: (d) => seen.push(d.n),
      onReset: (i) => resets.push(i),
    });
    const { sid } = await waitForValue('subscribe', () => r.frames('subscribe')[0]);
    r.send(0, { op: 'subscribed', sid, stream: STREAM, recovery: 'fresh', position: '5-0', exp: expSoon() });
    r.send(0, { op: 'stream_reset', stream: 'other:stream', position: '0-0' });
    r.send(0, event('3-0', 3));
    r.send(0, event('6-0', 6));
    await waitForValue('the later event', () => seen.length === 1);
    expect(seen).toEqual([6]);
    expect(resets).toEqual([]);
    expect(sub.duplicatesIgnored).toBe(1);
  });
});

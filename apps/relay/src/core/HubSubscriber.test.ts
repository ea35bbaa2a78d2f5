import { describe, expect, it } from 'vitest';
import type { Connection } from './Connection.js';
import { HubSubscriber } from './HubSubscriber.js';

const conn: Connection = {
  send: () => true,
  subscribe: () => undefined,
  unsubscribe: () => undefined,
  bufferedAmount: () => 0,
  cork: (fn) => fn(),
  close: () => undefined,
  closed: false,
};

const make = (): HubSubscriber => new HubSubscriber(conn, 's1', 'orders:42', '3-0', 100, () => undefined);

describe('HubSubscriber', () => {
  it('takes its resume decision only while pending, and records an acknowledged gap', () => {
    const sub = make();
    expect(sub.position).toBe('3-0');
    sub.decide('5-0', true);
    expect([sub.position, sub.acknowledgedGap]).toEqual(['5-0', '5-0']);
    sub.startCatchUp();
    sub.decide('9-0', false);
    expect([sub.phase, sub.position, sub.acknowledgedGap]).toEqual(['catching-up', '5-0', '5-0']);
  });

  it('advances its position only while catching up', () => {
    const sub = make();
    sub.advance('4-0');
    expect(sub.position).toBe('3-0');
    sub.startCatchUp();
    sub.advance('4-0');
    expect(sub.position).toBe('4-0');
    expect(sub.markLive()).toBe(true);
    sub.advance('5-0');
    expect(sub.position).toBe('4-0');
  });

  it('only moves forward: live once, and nothing after gone', () => {
    const sub = make();
    sub.startWaiting();
    sub.startCatchUp();
    expect(sub.phase).toBe('waiting');
    expect(sub.markLive()).toBe(true);
    expect(sub.markLive()).toBe(false);
    expect(sub.markGone()).toBe('live');
    expect(sub.gone).toBe(true);
    expect(sub.markLive()).toBe(false);
    sub.startCatchUp();
    expect(sub.phase).toBe('gone');
  });

  it('reports a catch-up pause once until it is resumed, and never outside catch-up', () => {
    const sub = make();
    expect(sub.pauseCatchUp()).toBe(false);
    sub.startCatchUp();
    expect(sub.pauseCatchUp()).toBe(true);
    expect(sub.pauseCatchUp()).toBe(false);
    sub.resumeCatchUp();
    expect(sub.pauseCatchUp()).toBe(true);
  });

  it('keeps the first start result and the latest token expiry', async () => {
    const sub = make();
    sub.settle({ ok: true });
    sub.settle({ ok: false, error: { code: 'internal', retryable: true, message: 'late' } });
    expect(await sub.started).toEqual({ ok: true });
    sub.renewExpiry(200);
    expect(sub.exp).toBe(200);
  });
});

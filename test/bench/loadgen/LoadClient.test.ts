import { describe, expect, it } from 'vitest';
import { LoadClient, newLoadTotals } from './LoadClient.js';
import type { LoadTotals } from './LoadClient.js';
import { PROTOCOLS } from './protocols.js';

function client(totals: LoadTotals): LoadClient {
  // Never started: no socket is opened; frames are handed to text() as the socket would.
  return new LoadClient(1, PROTOCOLS.relay, [], totals, { trackSeq: true, trackId: true, reconnect: false, onReady: () => undefined });
}

function feed(c: LoadClient, text: string, now: number): void {
  const buf = Buffer.from(`xx${text}yy`);
  c.text(buf, 2, buf.length - 2, now);
}

describe('LoadClient', () => {
  it('splits a relay entry’s latency at its id’s time: the server’s share from the write', () => {
    const t = newLoadTotals();
    const c = client(t);
    // Intended at 1000.5, written at 1003 (the id), delivered at 1007.25.
    feed(c, '{"op":"event","stream":"task:0","id":"1003-0","data":{"q":0,"t":1000.5,"p":"x"}}', 1007.25);
    expect(t.received).toBe(1);
    expect(t.histogram.maxValue).toBeGreaterThanOrEqual(6_749);
    expect(t.histogram.maxValue).toBeLessThanOrEqual(6_755);
    expect(t.fromWrite.totalCount).toBe(1);
    expect(t.fromWrite.maxValue).toBeGreaterThanOrEqual(4_249);
    expect(t.fromWrite.maxValue).toBeLessThanOrEqual(4_255);
  });

  it('records no share for a JetStream entry, whose id (`0-<seq>`) carries no time', () => {
    const t = newLoadTotals();
    const c = client(t);
    feed(c, '{"op":"event","stream":"task:0","id":"0-42","data":{"q":0,"t":1000.5,"p":"x"}}', 1007.25);
    expect(t.received).toBe(1);
    expect(t.histogram.totalCount).toBe(1);
    expect(t.fromWrite.totalCount).toBe(0);
  });

  it('records no share for a frame without an id (the peers’), and no gap between consecutive sequences', () => {
    const t = newLoadTotals();
    const c = client(t);
    feed(c, '42["e",{"q":0,"t":1000,"p":"x"}]', 1002);
    feed(c, '42["e",{"q":1,"t":1001,"p":"x"}]', 1003);
    expect(t.received).toBe(2);
    expect(t.gaps).toBe(0);
    expect(t.fromWrite.totalCount).toBe(0);
    expect(t.histogram.totalCount).toBe(2);
  });
});

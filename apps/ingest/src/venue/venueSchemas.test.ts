import { describe, expect, it } from 'vitest';
import {
  parseVenuePublish,
  parseVenueTopic,
  subTypeOf,
  venueKinds,
  venueRefusalCodes,
  venueRefusalSchema,
  venueSymbolSchema,
} from './venueSchemas.js';

describe('venueSymbolSchema', () => {
  it.each(['BTC-USD', 'AAPL', 'A', 'ABCDEFGHIJKL-ABCDEFGH', 'BRK2'])('accepts %s', (s) => {
    expect(venueSymbolSchema.safeParse(s).success).toBe(true);
  });
  it.each(['', 'btc-usd', 'BTC-', '-USD', 'ABCDEFGHIJKLM', 'BTC-USD-X', 'BTC/USD', 'BTC-ABCDEFGHI'])('refuses %j', (s) => {
    expect(venueSymbolSchema.safeParse(s).success).toBe(false);
  });
});

describe('kinds', () => {
  it('maps every kind to its venue sub_type', () => {
    expect(venueKinds.map(subTypeOf)).toEqual(['SNAPSHOT', 'QUOTE', 'TICK']);
  });
});

describe('venueRefusalSchema', () => {
  it('parses each refusal the venue documents', () => {
    expect(venueRefusalSchema.parse({ code: 'INVALID_SYMBOL', symbols: ['X'] })).toEqual({ code: 'INVALID_SYMBOL', symbols: ['X'] });
    expect(venueRefusalSchema.parse({ code: 'TOO_MANY_SYMBOLS_SUBSCRIPTION', limit: 100 })).toMatchObject({ limit: 100 });
    expect(venueRefusalSchema.parse({ code: 'INVALID_PARAMETER', message: 'symbols' })).toMatchObject({ code: 'INVALID_PARAMETER' });
    expect([...venueRefusalCodes].sort()).toEqual([
      'INTERNAL',
      'INVALID_APP_KEY',
      'INVALID_PARAMETER',
      'INVALID_SESSION',
      'INVALID_SYMBOL',
      'TOO_MANY_REQUESTS',
      'TOO_MANY_SYMBOLS_SUBSCRIPTION',
    ]);
  });
  it('refuses a known code missing the field that makes it actionable', () => {
    expect(venueRefusalSchema.safeParse({ code: 'INVALID_SYMBOL' }).success).toBe(false);
    expect(venueRefusalSchema.safeParse({ code: 'TOO_MANY_SYMBOLS_SUBSCRIPTION', limit: 'lots' }).success).toBe(false);
  });
});

describe('parseVenueTopic', () => {
  it('splits kind and symbol', () => {
    expect(parseVenueTopic('quote/BTC-USD')).toEqual({ kind: 'quote', symbol: 'BTC-USD' });
  });
  it.each(['quote', 'trade/BTC-USD', 'quote/btc', 'quote/BTC-USD/x', '/BTC'])('refuses %j', (t) => {
    expect(parseVenueTopic(t)).toBeUndefined();
  });
});

describe('parseVenuePublish', () => {
  const base = { symbol: 'BTC-USD', seq: 17, ts: 1_732_970_000_000 };

  it('parses each kind with its fields, keeping fields it does not know', () => {
    const snap = parseVenuePublish('snapshot/BTC-USD', JSON.stringify({ ...base, kind: 'snapshot', price: 1, venueExtra: 'x' }));
    expect(snap).toEqual({ ok: true, payload: { ...base, kind: 'snapshot', price: 1, venueExtra: 'x' } });
    expect(parseVenuePublish('quote/BTC-USD', JSON.stringify({ ...base, kind: 'quote', bid: 1, ask: 2 })).ok).toBe(true);
    expect(parseVenuePublish('tick/BTC-USD', JSON.stringify({ ...base, kind: 'tick', price: 1, size: 0.5 })).ok).toBe(true);
  });

  it('refuses what is not JSON, not the shape, or not what the topic says', () => {
    const cases: [string, string, RegExp][] = [
      ['quote/BTC-USD', 'not json', /not JSON/],
      ['quote/BTC-USD', JSON.stringify({ ...base, kind: 'quote', bid: 1 }), /ask/],
      ['quote/BTC-USD', JSON.stringify({ ...base, kind: 'quote', bid: 1, ask: 2, seq: -1 }), /seq/],
      ['quote/BTC-USD', JSON.stringify({ ...base, kind: 'snapshot', price: 1 }), /disagrees/],
      ['quote/ETH-USD', JSON.stringify({ ...base, kind: 'quote', bid: 1, ask: 2 }), /disagrees/],
      ['quotes/BTC-USD', JSON.stringify({ ...base, kind: 'quote', bid: 1, ask: 2 }), /topic/],
      ['quote/BTC-USD', 'null', /shape/],
    ];
    for (const [topic, body, why] of cases) {
      const result = parseVenuePublish(topic, body);
      expect(result.ok, `${topic} ${body}`).toBe(false);
      if (!result.ok) expect(result.why).toMatch(why);
    }
  });
});

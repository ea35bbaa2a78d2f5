import { describe, expect, it } from 'vitest';
import { keySlot } from '@streamgate/redis';
import { IngestFailure } from '../IngestError.js';
import { ingestKeys } from './ingestKeys.js';

describe('ingestKeys', () => {
  it('lays the keys out as <prefix>{S}<stream>:…, S being the part of the name Redis hashes', () => {
    const plain = ingestKeys('sg:ingest:', 'evm:eth:heads');
    expect([plain.lease, plain.fence, plain.state, plain.dedupe('7:0xab')]).toEqual([
      'sg:ingest:{evm:eth:heads}evm:eth:heads:lease',
      'sg:ingest:{evm:eth:heads}evm:eth:heads:fence',
      'sg:ingest:{evm:eth:heads}evm:eth:heads:state',
      'sg:ingest:{evm:eth:heads}evm:eth:heads:d:7:0xab',
    ]);
    expect(ingestKeys('sg:ingest:', '{t}:x').fence).toBe('sg:ingest:{t}{t}:x:fence');
  });

  it('puts every key in the stream’s own cluster slot, with or without a hash tag in the name', () => {
    for (const stream of ['evm:eth:heads', '{t}:x', '{tenant7}:orders:42', 'md.sim.BTC-USD', 'a{b', 'x{y}z{w}']) {
      const keys = ingestKeys('sg:ingest:', stream);
      const slots = new Set([keys.lease, keys.fence, keys.state, keys.dedupe('1'), keys.dedupe('}{')].map(keySlot));
      expect([...slots]).toEqual([keySlot(stream)]);
    }
  });

  it('refuses a stream no other key can share a slot with, naming it and the fix', () => {
    let thrown: unknown;
    try {
      ingestKeys('sg:ingest:', 'a}b');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(IngestFailure);
    expect((thrown as IngestFailure).error).toMatchObject({ code: 'stream_untaggable', retryable: false, stream: 'a}b' });
    expect((thrown as IngestFailure).error.message).toMatch(/"a}b".*give the stream a hash tag/);
  });

  it('refuses a prefix holding a brace, which would take the slot tag’s place', () => {
    expect(() => ingestKeys('sg:{x}:', 'evm:eth:heads')).toThrow(RangeError);
  });
});

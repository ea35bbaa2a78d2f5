import { describe, expect, it } from 'vitest';
import { ConfigError, parseIngestConfig } from './config.js';

const topology = {
  chains: { eth: { providers: [{ id: 'a', wsUrl: 'ws://a:8546', httpUrl: 'http://a:8545' }] } },
  streams: [{ stream: 'chain:eth:heads', chain: 'eth', kind: 'newHeads' }],
};
const env = (over: Record<string, string | undefined> = {}) => ({
  INGEST_REDIS_URL: 'redis://localhost:6379/0',
  INGEST_TOPOLOGY: JSON.stringify(topology),
  ...over,
});

describe('parseIngestConfig', () => {
  it('fills defaults', () => {
    const config = parseIngestConfig(env());
    expect(config.topology.chains.eth?.maxBackfillBlocks).toBe(32);
    expect(config.topology.streams[0]?.continuity).toBe('best_effort');
    expect(config.INGEST_LEASE_TTL_MS).toBe(10_000);
  });

  it.each([
    [{ INGEST_REDIS_URL: undefined }, /INGEST_REDIS_URL/],
    [{ INGEST_TOPOLOGY: 'not json' }, /INGEST_TOPOLOGY: is not JSON/],
    [{ INGEST_TOPOLOGY: undefined }, /set exactly one of INGEST_TOPOLOGY/],
    [{ INGEST_TICK_MS: '5000' }, /INGEST_TICK_MS: must be at most a third/],
    [{ INGEST_TOPOLOGY: JSON.stringify({ ...topology, streams: [{ stream: 'x', chain: 'nope', kind: 'newHeads' }] }) }, /unknown chain "nope"/],
    [{ INGEST_TOPOLOGY: JSON.stringify({ ...topology, streams: [{ stream: 'x', chain: 'eth', kind: 'blocks' }] }) }, /INGEST_TOPOLOGY\.streams\.0\.kind/],
    [
      { INGEST_TOPOLOGY: JSON.stringify({ chains: { eth: { providers: [{ id: 'a', wsUrl: 'ws://a' }] } }, streams: topology.streams }) },
      /no provider has an httpUrl/,
    ],
    [
      { INGEST_TOPOLOGY: JSON.stringify({ chains: { eth: { providers: [{ id: 'a', wsUrl: 'http://a', httpUrl: 'http://a' }] } }, streams: topology.streams }) },
      /providers\.0\.wsUrl/,
    ],
    [{ INGEST_TOPOLOGY: JSON.stringify({ ...topology, streams: [topology.streams[0], topology.streams[0]] }) }, /duplicate stream/],
  ])('refuses %o naming the variable or field', (over, message) => {
    expect(() => parseIngestConfig(env(over))).toThrow(ConfigError);
    expect(() => parseIngestConfig(env(over))).toThrow(message);
  });
});

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

const venue = { mqttUrl: 'mqtt://127.0.0.1:1883', httpUrl: 'http://127.0.0.1:8080', appKey: 'key', symbols: ['BTC-USD', 'AAPL'] };
/** A venue-only topology with `over` laid on a valid venue (`undefined` removes the field). */
const withVenue = (over: Record<string, unknown>) => ({ INGEST_TOPOLOGY: JSON.stringify({ venues: { sim: { ...venue, ...over } } }) });

describe('parseIngestConfig', () => {
  it('fills defaults', () => {
    const config = parseIngestConfig(env());
    expect(config.topology.chains.eth?.maxBackfillBlocks).toBe(32);
    expect(config.topology.streams[0]?.continuity).toBe('best_effort');
    expect(config.INGEST_LEASE_TTL_MS).toBe(10_000);
  });

  it('takes a venue-only topology, filling the venue defaults', () => {
    const config = parseIngestConfig(env(withVenue({})));
    expect(config.topology.streams).toEqual([]);
    expect(config.topology.venues.sim).toMatchObject({ symbols: ['BTC-USD', 'AAPL'], kinds: ['snapshot', 'quote', 'tick'], maxSymbolsPerSession: 100, maxSessions: 5 });
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
    [withVenue({ symbols: ['BTC-USD', 'btc usd'] }), /INGEST_TOPOLOGY\.venues\.sim\.symbols\.1: /],
    [withVenue({ appKey: undefined }), /INGEST_TOPOLOGY\.venues\.sim\.appKey: /],
    [withVenue({ appKey: '' }), /INGEST_TOPOLOGY\.venues\.sim\.appKey: /],
    [withVenue({ mqttUrl: 'http://127.0.0.1:1883' }), /INGEST_TOPOLOGY\.venues\.sim\.mqttUrl: /],
    [withVenue({ symbols: [] }), /INGEST_TOPOLOGY\.venues\.sim\.symbols: /],
    [withVenue({ symbols: ['AAPL', 'AAPL'] }), /INGEST_TOPOLOGY\.venues\.sim\.symbols: symbols must be unique/],
    [withVenue({ kinds: ['quote'], declaredKinds: ['tick'] }), /INGEST_TOPOLOGY\.venues\.sim\.declaredKinds: declares "tick"/],
    [withVenue({ reassertIntervalMs: 10 }), /INGEST_TOPOLOGY\.venues\.sim\.reassertIntervalMs: /],
    [{ INGEST_TOPOLOGY: JSON.stringify({ venues: { 'Bad Name': venue } }) }, /INGEST_TOPOLOGY\.venues\.Bad Name: a venue name is 1–32 lowercase/],
  ])('refuses %o naming the variable or field', (over, message) => {
    expect(() => parseIngestConfig(env(over))).toThrow(ConfigError);
    expect(() => parseIngestConfig(env(over))).toThrow(message);
  });
});

import { describe, expect, it } from 'vitest';
import { parseIngestConfig } from './config.js';
import type { IngestConfig } from './config.js';

const topology = {
  chains: { eth: { providers: [{ id: 'a', wsUrl: 'ws://a:8546', httpUrl: 'http://a:8545' }] } },
  streams: [{ stream: 'evm:eth:heads', chain: 'eth', kind: 'newHeads' }],
};
const env = (over: Record<string, string | undefined> = {}) => ({
  INGEST_REDIS_URL: 'redis://localhost:6379/0',
  INGEST_TOPOLOGY: JSON.stringify(topology),
  ...over,
});

const venue = { mqttUrl: 'mqtt://127.0.0.1:1883', httpUrl: 'http://127.0.0.1:8080', appKey: 'key', symbols: ['BTC-USD', 'AAPL'] };
/** A venue-only topology with `over` laid on a valid venue (`undefined` removes the field). */
const withVenue = (over: Record<string, unknown>) => ({ INGEST_TOPOLOGY: JSON.stringify({ venues: { sim: { ...venue, ...over } } }) });

function config(over: Record<string, string | undefined> = {}): IngestConfig {
  const result = parseIngestConfig(env(over));
  if (!result.ok) throw new Error(result.error.message);
  return result.config;
}

/** The whole error message (one line per problem), after checking the error's shape. */
function refusal(over: Record<string, string | undefined>): string {
  const result = parseIngestConfig(env(over));
  if (result.ok) throw new Error('expected a configuration error');
  expect(result.error).toMatchObject({ code: 'config_invalid', retryable: false });
  return result.error.message;
}

describe('parseIngestConfig', () => {
  it('refuses a worker id too long to name the pod in operations snapshots', () => {
    expect(refusal({ INGEST_WORKER_ID: 'w'.repeat(121) })).toMatch(/INGEST_WORKER_ID="w+…": must be at most 120 characters/);
    expect(config({ INGEST_WORKER_ID: 'w'.repeat(120) }).INGEST_WORKER_ID).toHaveLength(120);
  });

  it('fills defaults', () => {
    const parsed = config();
    expect(parsed.topology.chains.eth?.maxBackfillBlocks).toBe(32);
    expect(parsed.topology.streams[0]?.continuity).toBe('best_effort');
    expect(parsed.INGEST_LEASE_TTL_MS).toBe(10_000);
    expect(parsed.INGEST_STREAM_MAXLEN).toBe(100_000);
    expect(parsed.INGEST_DEMAND_PREFIXES).toEqual([]);
  });

  it('refuses a topology field it does not know, naming it, rather than running on the default', () => {
    expect(refusal(withVenue({ maxSymbolPerSession: 10 }))).toMatch(/venues\.sim.*maxSymbolPerSession/);
    const chain = { ...topology.chains.eth, blockTime: 2_000 };
    expect(refusal({ INGEST_TOPOLOGY: JSON.stringify({ ...topology, chains: { eth: chain } }) })).toMatch(/chains\.eth.*blockTime/);
    expect(refusal({ INGEST_TOPOLOGY: JSON.stringify({ ...topology, stream: [] }) })).toMatch(/"stream"/);
  });

  it('refuses two venues on one endpoint and app key whose limits differ, naming neither the key nor its value', () => {
    const venues = (west: Record<string, unknown>) => ({
      INGEST_TOPOLOGY: JSON.stringify({ venues: { east: { ...venue }, west: { ...venue, symbols: ['ETH-USD'], ...west } } }),
    });
    const message = refusal(venues({ rateLimit: { perSecond: 20, burst: 10 }, maxSessions: 3, httpUrl: `${venue.httpUrl}/` }));
    expect(message).toMatch(
      /venues\.west: uses the same app key at http:\/\/127\.0\.0\.1:8080 as venue east, .*set the same rateLimit and maxSessions on both/,
    );
    expect(message).not.toContain('"key"');
    // Equal limits, or another key or endpoint: accepted.
    expect(config(venues({ rateLimit: { perSecond: 10, burst: 10 } })).topology.venues.west?.maxSessions).toBe(5);
    expect(config(venues({ appKey: 'other', maxSessions: 3 })).topology.venues.west?.maxSessions).toBe(3);
    expect(config(venues({ httpUrl: 'http://127.0.0.1:8081', maxSessions: 3 })).topology.venues.west?.maxSessions).toBe(3);
  });

  it('says which schemes a URL may have', () => {
    expect(refusal(withVenue({ mqttUrl: 'ws://127.0.0.1:1883' }))).toMatch(/mqttUrl: must be an mqtt:\/\/ or mqtts:\/\/ URL/);
  });

  it('takes a venue-only topology, filling the venue defaults', () => {
    const parsed = config(withVenue({}));
    expect(parsed.topology.streams).toEqual([]);
    expect(parsed.topology.venues.sim).toMatchObject({
      symbols: ['BTC-USD', 'AAPL'],
      kinds: ['snapshot', 'quote', 'tick'],
      maxSymbolsPerSession: 100,
      maxSessions: 5,
    });
  });

  it.each([
    [
      { INGEST_REDIS_URL: undefined },
      /INGEST_REDIS_URL \(unset\): and INGEST_REDIS_TARGETS are both unset; set exactly one: INGEST_REDIS_URL to the Redis \(or Redis Cluster\) the relays read/,
    ],
    [
      { INGEST_REDIS_TARGETS: 'redis://a:6379/0' },
      /INGEST_REDIS_URL="redis:\/\/localhost:6379\/0": and INGEST_REDIS_TARGETS are both set; set exactly one/,
    ],
    [
      { INGEST_REDIS_URL: undefined, INGEST_REDIS_TARGETS: 'redis://a:6379/0,redis://b:6379,redis://A:6379/0' },
      /INGEST_REDIS_TARGETS="[^"]*": lists redis:\/\/a:6379\/0 more than once; list each instance once/,
    ],
    [
      { INGEST_REDIS_URL: undefined, INGEST_REDIS_TARGETS: 'redis://a:6379/0,redis://u:secret@b:6379/0' },
      /"redis:\/\/<credentials>@b:6379\/0" is not a redis:\/\/, rediss:\/\/, redis-cluster:\/\/ or rediss-cluster:\/\/ URL without credentials; .*INGEST_REDIS_PASSWORD/,
    ],
    [
      { INGEST_REDIS_URL: 'redis-cluster://c:7000/3' },
      /INGEST_REDIS_URL="redis-cluster:\/\/c:7000\/3": must be a redis:\/\/ or rediss:\/\/ URL/,
    ],
    [{ INGEST_KEY_PREFIX: 'sg:{ingest}:' }, /INGEST_KEY_PREFIX="sg:\{ingest\}:": must not contain "\{" or "\}"/],
    [
      { INGEST_TOPOLOGY: JSON.stringify({ ...topology, streams: [{ stream: 'evm:a}b', chain: 'eth', kind: 'newHeads' }] }) },
      /INGEST_TOPOLOGY\.streams\.0\.stream: ingest cannot serve "evm:a}b" hashes as a whole and contains "}".*give the stream a hash tag/,
    ],
    [withVenue({ symbols: ['AAPL'], controlStream: 'md.sim}ctl' }), /INGEST_TOPOLOGY\.venues\.sim: ingest cannot serve "md.sim}ctl"/],
    [{ INGEST_TOPOLOGY: 'not json' }, /INGEST_TOPOLOGY: is not JSON/],
    [
      { INGEST_TOPOLOGY: undefined },
      /INGEST_TOPOLOGY \(unset\): and INGEST_TOPOLOGY_FILE are both unset; set exactly one of INGEST_TOPOLOGY/,
    ],
    [{ INGEST_TICK_MS: '5000' }, /INGEST_TICK_MS="5000": must be at most a third of INGEST_LEASE_TTL_MS \(10000\)/],
    [
      { INGEST_STREAM_MAXLEN: '-1' },
      /INGEST_STREAM_MAXLEN="-1": must be an integer from 0 to 1000000000 \(0 = never trim\); set it to an integer in that range or leave it unset for 100000/,
    ],
    [{ INGEST_REDIS_URL: 'http://r:6379' }, /INGEST_REDIS_URL="http:\/\/r:6379": must be a redis:\/\/ or rediss:\/\/ URL/],
    [{ INGEST_OPS_REDIS_URL: 'ops:6379' }, /INGEST_OPS_REDIS_URL="ops:6379": must be a redis:\/\/ or rediss:\/\/ URL/],
    [{ INGEST_OPS_STREAM: 'ops stream' }, /INGEST_OPS_STREAM="ops stream": must be a stream name/],
    [
      { INGEST_TOPOLOGY: JSON.stringify({ ...topology, streams: [{ stream: 'x', chain: 'nope', kind: 'newHeads' }] }) },
      /unknown chain "nope"/,
    ],
    [
      { INGEST_TOPOLOGY: JSON.stringify({ ...topology, streams: [{ stream: 'x', chain: 'eth', kind: 'blocks' }] }) },
      /INGEST_TOPOLOGY\.streams\.0\.kind/,
    ],
    [
      { INGEST_TOPOLOGY: JSON.stringify({ chains: { eth: { providers: [{ id: 'a', wsUrl: 'ws://a' }] } }, streams: topology.streams }) },
      /no provider has an httpUrl/,
    ],
    [
      {
        INGEST_TOPOLOGY: JSON.stringify({
          chains: { eth: { providers: [{ id: 'a', wsUrl: 'http://a', httpUrl: 'http://a' }] } },
          streams: topology.streams,
        }),
      },
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
    [
      { INGEST_TOPOLOGY: JSON.stringify({ venues: { 'Bad Name': venue } }) },
      /INGEST_TOPOLOGY\.venues\.Bad Name: a venue name is 1–32 lowercase/,
    ],
  ])('refuses %o naming the variable or field', (over, message) => {
    expect(refusal(over)).toMatch(message);
  });

  it('never quotes a topology that is not JSON: the text around the fault may be an API key', () => {
    for (const text of [`{"chains": {"wsUrl": 'wss://node/SECRETKEY`, '{"chains": SECRETTOPO', '{SECRET']) {
      const message = refusal({ INGEST_TOPOLOGY: text });
      expect(message).toMatch(/INGEST_TOPOLOGY: is not JSON( at character \d+)? \(its text is not shown\)/);
      expect(message).not.toMatch(/SECRET/);
    }
  });

  it('takes a blank value as unset: the default, never 0 (streams stay trimmed)', () => {
    const parsed = config({
      INGEST_STREAM_MAXLEN: '',
      INGEST_PORT: ' ',
      INGEST_DEMAND_GRACE_MS: '',
      INGEST_TOPOLOGY_FILE: '',
      LOG_LEVEL: '',
    });
    expect(parsed).toMatchObject({ INGEST_STREAM_MAXLEN: 100_000, INGEST_PORT: 8090, INGEST_DEMAND_GRACE_MS: 30_000, LOG_LEVEL: 'info' });
    expect(parsed.INGEST_TOPOLOGY_FILE).toBeUndefined();
    expect(refusal({ INGEST_REDIS_URL: '' })).toMatch(/INGEST_REDIS_URL="": and INGEST_REDIS_TARGETS are both unset/);
  });

  it('writes to one target, normalized, with the credentials of its URL split off', () => {
    expect(config().redis).toEqual({ targets: ['redis://localhost:6379/0'], username: undefined, password: undefined });
    expect(config({ INGEST_REDIS_URL: 'redis-cluster://Seed:7000', INGEST_REDIS_PASSWORD: 'pw' }).redis).toEqual({
      targets: ['redis-cluster://seed:7000'],
      username: undefined,
      password: 'pw',
    });
    expect(config({ INGEST_REDIS_URL: 'rediss://ing%40est:p%3Aw@r:6380/2', INGEST_REDIS_PASSWORD: 'other' }).redis).toEqual({
      targets: ['rediss://r:6380/2'],
      username: 'ing@est',
      password: 'p:w',
    });
  });

  it('waits for lease replicas only when INGEST_LEASE_WAIT_REPLICAS is set (blank is unset)', () => {
    expect(config().redis.leaseWait).toBeUndefined();
    expect(config({ INGEST_LEASE_WAIT_REPLICAS: ' ', INGEST_LEASE_WAIT_TIMEOUT_MS: '9999' }).redis.leaseWait).toBeUndefined();
    expect(config({ INGEST_LEASE_WAIT_REPLICAS: '1' }).redis.leaseWait).toEqual({ count: 1, timeoutMs: 500 });
    expect(config({ INGEST_LEASE_WAIT_REPLICAS: '2', INGEST_LEASE_WAIT_TIMEOUT_MS: '' }).redis.leaseWait).toEqual({
      count: 2,
      timeoutMs: 500,
    });
    expect(config({ INGEST_LEASE_WAIT_REPLICAS: '1', INGEST_LEASE_WAIT_TIMEOUT_MS: '3000' }).redis.leaseWait).toEqual({
      count: 1,
      timeoutMs: 3000,
    });
    expect(refusal({ INGEST_LEASE_WAIT_REPLICAS: '0' })).toMatch(
      /INGEST_LEASE_WAIT_REPLICAS="0": must be an integer from 1 to 100; .* or leave it unset to use a lease without waiting/,
    );
    expect(refusal({ INGEST_LEASE_WAIT_REPLICAS: '1', INGEST_LEASE_WAIT_TIMEOUT_MS: '0' })).toMatch(
      /INGEST_LEASE_WAIT_TIMEOUT_MS="0": must be an integer from 1/,
    );
    expect(refusal({ INGEST_LEASE_WAIT_REPLICAS: '1', INGEST_LEASE_WAIT_TIMEOUT_MS: '3500' })).toMatch(
      /INGEST_LEASE_WAIT_TIMEOUT_MS="3500": must be at most a third of INGEST_LEASE_TTL_MS \(10000\) when INGEST_LEASE_WAIT_REPLICAS is set/,
    );
  });

  it('places streams on the instances of INGEST_REDIS_TARGETS, each normalized like auth and the publisher list it', () => {
    const parsed = config({ INGEST_REDIS_URL: '', INGEST_REDIS_TARGETS: 'redis://A:6379, redis://b:6380/0', INGEST_REDIS_USERNAME: 'ing' });
    expect(parsed.redis).toEqual({ targets: ['redis://a:6379/0', 'redis://b:6380/0'], username: 'ing', password: undefined });
    // A list entry may be a cluster, which then holds its share of the streams (docs/protocol.md §16).
    expect(config({ INGEST_REDIS_URL: '', INGEST_REDIS_TARGETS: 'redis://r0:6379/0,redis-cluster://C:7000/0' }).redis.targets).toEqual([
      'redis://r0:6379/0',
      'redis-cluster://c:7000',
    ]);
  });

  it('names the variable when the credentials of a URL are not valid percent-encoding, rather than throwing', () => {
    expect(refusal({ INGEST_REDIS_URL: 'redis://us%zz:p@h' })).toMatch(
      /INGEST_REDIS_URL="redis:\/\/<credentials>@h": must be a redis:\/\//,
    );
    expect(refusal({ INGEST_OPS_REDIS_URL: 'redis://u:p%E0%A4%A@ops' })).toMatch(
      /INGEST_OPS_REDIS_URL="redis:\/\/<credentials>@ops": must be a redis:\/\//,
    );
  });

  it('never shows INGEST_REDIS_PASSWORD, nor the credentials of a URL', () => {
    const message = refusal({ INGEST_REDIS_PASSWORD: 'hunter2', INGEST_PORT: 'x', INGEST_REDIS_URL: 'http://u:hunter3@r' });
    expect(message).not.toContain('hunter2');
    expect(message).not.toContain('hunter3');
  });

  it('publishes operations snapshots only with INGEST_OPS_REDIS_URL set, to streamgate:ops by default', () => {
    expect(config().INGEST_OPS_REDIS_URL).toBeUndefined();
    expect(config({ INGEST_OPS_REDIS_URL: ' ' }).INGEST_OPS_REDIS_URL).toBeUndefined();
    expect(config({ INGEST_OPS_STREAM: '' }).INGEST_OPS_STREAM).toBe('streamgate:ops');
    const on = config({ INGEST_OPS_REDIS_URL: 'redis://ops:6379/1', INGEST_OPS_STREAM: 'ops:eu' });
    expect(on).toMatchObject({ INGEST_OPS_REDIS_URL: 'redis://ops:6379/1', INGEST_OPS_STREAM: 'ops:eu' });
  });

  it('reads the demand prefixes relays and auth use', () => {
    expect(config({ INGEST_DEMAND_PREFIXES: 'evm:, md.' }).INGEST_DEMAND_PREFIXES).toEqual(['evm:', 'md.']);
  });

  it("reports every problem at once, the topology's with the environment's, and never prints the topology", () => {
    const secretTopology = JSON.stringify({
      chains: { eth: { providers: [{ id: 'a', wsUrl: 'wss://x/KEY123' }] } },
      streams: topology.streams,
    });
    const message = refusal({ INGEST_PORT: 'abc', INGEST_STREAM_MAXLEN: '1.5', INGEST_TICK_MS: '5000', INGEST_TOPOLOGY: secretTopology });
    expect(message).toMatch(/^invalid ingest configuration \(4 problems\):/);
    expect(message).toMatch(/INGEST_PORT="abc"/);
    expect(message).toMatch(/INGEST_STREAM_MAXLEN="1.5"/);
    expect(message).toMatch(/INGEST_TICK_MS="5000"/);
    expect(message).toMatch(/INGEST_TOPOLOGY\.chains\.eth\.providers: no provider has an httpUrl/);
    expect(message).not.toContain('KEY123');
  });
});

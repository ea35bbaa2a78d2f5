import { describe, expect, it } from 'vitest';
import { spawnTsEntry, startRedis } from '@streamgate/testkit';

const topology = {
  chains: { eth: { providers: [{ id: 'a', wsUrl: 'ws://127.0.0.1:9', httpUrl: 'http://127.0.0.1:9' }] } },
  streams: [{ stream: 'chain:eth:heads', chain: 'eth', kind: 'newHeads' }],
};

describe('ingest main', () => {
  it('exits 78 naming the variable and the fix when the topology is wrong', async () => {
    const bad = { ...topology, streams: [{ stream: 'x', chain: 'nope', kind: 'newHeads' }] };
    await using service = await spawnTsEntry('apps/ingest/src/main.ts', {
      name: 'ingest-bad-config',
      env: { INGEST_REDIS_URL: 'redis://127.0.0.1:9/0', INGEST_TOPOLOGY: JSON.stringify(bad), INGEST_PORT: '0' },
    });
    const status = await service.exited;
    expect(status.code).toBe(78);
    // pino writes the message as a JSON string, so its quotes arrive escaped.
    expect(service.output()).toMatch(/INGEST_TOPOLOGY\.streams\.0\.chain: unknown chain \\"nope\\"/);
  });

  it.each([
    [{ symbols: ['BTC-USD', 'btc usd'] }, /INGEST_TOPOLOGY\.venues\.sim\.symbols\.1: /],
    [{ appKey: undefined }, /INGEST_TOPOLOGY\.venues\.sim\.appKey: /],
  ])('exits 78 at boot naming the bad venue field (%o)', async (over, message) => {
    const venue = { mqttUrl: 'mqtt://127.0.0.1:9', httpUrl: 'http://127.0.0.1:9', appKey: 'key', symbols: ['BTC-USD'], ...over };
    await using service = await spawnTsEntry('apps/ingest/src/main.ts', {
      name: 'ingest-bad-venue',
      env: { INGEST_REDIS_URL: 'redis://127.0.0.1:9/0', INGEST_TOPOLOGY: JSON.stringify({ venues: { sim: venue } }), INGEST_PORT: '0' },
    });
    const status = await service.exited;
    expect(status.code).toBe(78);
    expect(service.output()).toMatch(message);
    expect(service.output()).not.toMatch(/"msg":"listening"/);
  });

  it('logs listening with its port, serves health and metrics, and exits 0 on SIGTERM', async () => {
    await using redis = await startRedis();
    await using service = await spawnTsEntry('apps/ingest/src/main.ts', {
      name: 'ingest-main',
      env: { INGEST_HOST: '127.0.0.1', INGEST_PORT: '0', INGEST_REDIS_URL: redis.url, INGEST_TOPOLOGY: JSON.stringify(topology), LOG_LEVEL: 'info' },
      readyPattern: /"msg":"listening"/,
    });
    const line = await service.waitForLine(/"msg":"listening"/);
    const port = (JSON.parse(line) as { port: number }).port;
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    expect(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()).toContain('ingest_owned_streams');
    expect((await service.stop()).code).toBe(0);
  });
});

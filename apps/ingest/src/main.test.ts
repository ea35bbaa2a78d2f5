import { describe, expect, it } from 'vitest';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { repoRoot, spawnTsEntry, startRedis, withDeadline } from '@streamgate/testkit';

const FAULT_FIXTURE = join(repoRoot(), 'packages/boot/src/__fixtures__/faultOnSignal.ts');

const topology = {
  chains: { eth: { providers: [{ id: 'a', wsUrl: 'ws://127.0.0.1:9', httpUrl: 'http://127.0.0.1:9' }] } },
  streams: [
    { stream: 'evm:eth:heads', chain: 'eth', kind: 'newHeads' },
    // Written from an older README: no relay or auth registers demand under `chain:`.
    { stream: 'chain:eth:heads', chain: 'eth', kind: 'newHeads' },
  ],
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

  it('exits 78 with every problem in one record, a blank required variable included', async () => {
    await using service = await spawnTsEntry('apps/ingest/src/main.ts', {
      name: 'ingest-bad-env',
      env: { INGEST_REDIS_URL: '', INGEST_TOPOLOGY: JSON.stringify(topology), INGEST_PORT: 'abc', INGEST_STREAM_MAXLEN: '-1' },
    });
    expect((await withDeadline(service.exited, 20_000, 'ingest exit on a bad configuration')).code).toBe(78);
    const output = service.output();
    expect(output).toContain('invalid ingest configuration (3 problems)');
    expect(output).toMatch(/"variables":\["INGEST_PORT","INGEST_STREAM_MAXLEN","INGEST_REDIS_URL"\]/);
    expect(output).toContain('INGEST_REDIS_URL=\\"\\": and INGEST_REDIS_TARGETS are both unset; set exactly one');
    expect(output).toContain('INGEST_STREAM_MAXLEN=\\"-1\\": must be an integer from 0 to 1000000000 (0 = never trim)');
  });

  it('exits 1, a failed start and not a fault, when its port is taken', async () => {
    await using redis = await startRedis();
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = taken.address() as AddressInfo;
      await using service = await spawnTsEntry('apps/ingest/src/main.ts', {
        name: 'ingest-port-taken',
        env: {
          INGEST_HOST: '127.0.0.1',
          INGEST_PORT: String(port),
          INGEST_REDIS_URL: redis.url,
          INGEST_TOPOLOGY: JSON.stringify(topology),
        },
      });
      expect((await withDeadline(service.exited, 20_000, 'ingest exit on a taken port')).code).toBe(1);
      expect(service.output()).toContain('EADDRINUSE');
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it('on an unhandled rejection logs it with its context and exits 70', async () => {
    await using redis = await startRedis();
    await using service = await spawnTsEntry('apps/ingest/src/main.ts', {
      name: 'ingest-fault',
      env: { INGEST_HOST: '127.0.0.1', INGEST_PORT: '0', INGEST_REDIS_URL: redis.url, INGEST_TOPOLOGY: JSON.stringify(topology) },
      nodeArgs: ['--import', FAULT_FIXTURE],
      readyPattern: /"msg":"listening"/,
    });
    service.signal('SIGUSR2');
    const fatal = await service.waitForLine(/"level":60/, 10_000);
    expect(fatal).toContain('"kind":"unhandledRejection"');
    expect(fatal).toContain('fixture: rejection nobody handles');
    expect((await withDeadline(service.exited, 10_000, 'ingest exit after the fault')).code).toBe(70);
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
      env: {
        INGEST_HOST: '127.0.0.1',
        INGEST_PORT: '0',
        INGEST_REDIS_URL: redis.url,
        INGEST_TOPOLOGY: JSON.stringify(topology),
        INGEST_DEMAND_PREFIXES: 'evm:,md.',
        LOG_LEVEL: 'info',
      },
      readyPattern: /"msg":"listening"/,
    });
    const line = await service.waitForLine(/"msg":"listening"/);
    const port = (JSON.parse(line) as { port: number }).port;
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toContain('ingest_owned_streams');
    // The stream outside every demand prefix is named at boot and counted.
    const warning = await service.waitForLine(/match no demand prefix/);
    expect(warning).toContain('"streams":["chain:eth:heads"]');
    expect(warning).toContain('"demandPrefixes":["evm:","md."]');
    expect(metrics).toMatch(/^ingest_streams_outside_demand_prefixes 1$/m);
    expect((await service.stop()).code).toBe(0);
  });
});

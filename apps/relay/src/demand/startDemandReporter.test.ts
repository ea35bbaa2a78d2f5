import { pino } from 'pino';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INGEST_DEMAND_KEY } from '@streamgate/demand';
import { freePort, startRedis, waitFor } from '@streamgate/testkit';
import type { RedisServer } from '@streamgate/testkit';
import { parseRelayConfig } from '../config.js';
import type { RelayConfig } from '../config.js';
import { DemandMetrics } from './DemandMetrics.js';
import type { SubscribedStreams } from './demandFeeds.js';
import { startDemandReporter } from './startDemandReporter.js';

const JETSTREAM = 'nats://n1:4222/TASKS';
const hub = (...streams: string[]): SubscribedStreams => ({ streamsWithSubscribers: () => [...streams] });

function capture(): { log: Logger; lines: Array<{ level: number; msg: string; target?: string }> } {
  const lines: Array<{ level: number; msg: string; target?: string }> = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as { level: number; msg: string }) });
  return { log, lines };
}

function relayConfig(env: Record<string, string>): RelayConfig {
  const result = parseRelayConfig({
    RELAY_JWKS_URL: 'http://auth:8080/.well-known/jwks.json',
    RELAY_TOKEN_AUDIENCE: 'relay',
    RELAY_TOKEN_ISSUER: 'auth',
    RELAY_NODE_ID: 'demand-unit',
    RELAY_DEMAND_PREFIXES: 'evm:',
    RELAY_DEMAND_INTERVAL_MS: '100',
    ...env,
  });
  if (!result.ok) throw new Error(result.error.message);
  return result.config;
}

async function metricValue(registry: Registry, name: string, labels: string): Promise<number> {
  const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('startDemandReporter (real redis-server)', () => {
  let redis: RedisServer;
  let down = '';
  beforeAll(async () => {
    redis = await startRedis();
    // Nothing listens here: a Redis target that is down.
    down = `redis://127.0.0.1:${await freePort()}/0`;
  });
  afterAll(async () => {
    await redis?.stop();
  });

  it("records the JetStream targets' streams in the demand target, in its one heartbeat, over its one connection; counts and logs another target's failures", async () => {
    const config = relayConfig({
      RELAY_REDIS_ALLOWLIST: `${down},${redis.url}`,
      RELAY_JETSTREAM_ALLOWLIST: JETSTREAM,
      RELAY_JETSTREAM_DEMAND_TARGET: redis.url,
    });
    const registry = new Registry();
    const { log, lines } = capture();
    const reporter = startDemandReporter(
      config,
      {
        redis: new Map([
          [redis.url, hub('evm:on-redis', 'demo:not-ingest')],
          [down, hub('evm:on-down')],
        ]),
        jetStream: new Map([[JETSTREAM, hub('evm:on-jetstream')]]),
      },
      new DemandMetrics(registry),
      log,
    );
    const client = redis.client();
    try {
      await waitFor(async () => (await client.zrange(INGEST_DEMAND_KEY, '0', '-1')).length === 2, {
        timeoutMs: 5_000,
        message: 'the demand target never held both streams',
      });
      expect((await client.zrange(INGEST_DEMAND_KEY, '0', '-1')).sort()).toEqual(['evm:on-jetstream', 'evm:on-redis']);
      const clients = (await client.client('LIST')) as string;
      expect(clients.split('\n').filter((line) => line.includes('name=streamgate-relay-demand:demand-unit'))).toHaveLength(1);
      await waitFor(
        async () => (await metricValue(registry, 'streamgate_relay_demand_heartbeats_total', `target="${down}",outcome="failed"`)) >= 2,
        {
          timeoutMs: 10_000,
          message: 'the down target’s failures were never counted',
        },
      );
      expect(
        await metricValue(registry, 'streamgate_relay_demand_heartbeats_total', `target="${redis.url}",outcome="sent"`),
      ).toBeGreaterThan(0);
      expect(await metricValue(registry, 'streamgate_relay_demand_streams', `target="${redis.url}"`)).toBe(2);
      // A streak of failures is logged once, not every interval.
      expect(lines.filter((l) => l.msg.startsWith('demand heartbeat failed'))).toEqual([
        expect.objectContaining({ level: 40, target: down }),
      ]);
      expect(lines.some((l) => l.msg.includes('RELAY_JETSTREAM_DEMAND_TARGET'))).toBe(true);
    } finally {
      reporter?.close();
    }
  }, 20_000);

  it('starts nothing without RELAY_DEMAND_PREFIXES', () => {
    const config = relayConfig({ RELAY_REDIS_ALLOWLIST: redis.url, RELAY_DEMAND_PREFIXES: '' });
    expect(
      startDemandReporter(
        config,
        { redis: new Map([[redis.url, hub('evm:x')]]), jetStream: new Map() },
        new DemandMetrics(new Registry()),
        capture().log,
      ),
    ).toBeNull();
  });
});

import { describe, expect, it } from 'vitest';
import { INGEST_DEMAND_KEY } from '@streamgate/demand';
import { waitFor } from '@streamgate/testkit';
import { metricValue, useFleet } from './support/startFleet.js';

const getFleet = useFleet({ authEnv: { AUTH_DEMAND_PREFIXES: 'demo:chain-', AUTH_DEMAND_TTL_MS: '60000' } });

describe('auth registers ingest demand', () => {
  it('puts a stream under a demand prefix into the demand set when it mints its token, and no other', async () => {
    const fleet = getFleet();
    const redis = fleet.redis.client();
    await fleet.trpc.demo.token.query({ stream: 'chain-1-heads', user: 'alice' });
    await fleet.trpc.demo.token.query({ stream: 'ticks', user: 'alice' });
    await waitFor(async () => (await redis.zscore(INGEST_DEMAND_KEY, 'demo:chain-1-heads')) !== null, {
      timeoutMs: 10_000,
      message: 'the minted stream never appeared in the demand set',
    });
    // The demand lasts for the configured TTL, scored by Redis's own clock.
    const [seconds] = await redis.time();
    const score = Number(await redis.zscore(INGEST_DEMAND_KEY, 'demo:chain-1-heads'));
    expect(score - Number(seconds) * 1000).toBeGreaterThan(50_000);
    expect(await redis.zscore(INGEST_DEMAND_KEY, 'demo:ticks')).toBeNull();
    const metrics = await (await fetch(`${fleet.authUrl}/metrics`)).text();
    expect(metricValue(metrics, 'streamgate_auth_demand_registrations_total', 'outcome="registered"')).toBe(1);
  });
});

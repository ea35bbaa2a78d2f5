import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnRelay, startRedis } from '@streamgate/testkit';
import type { RedisServer, RelayProcess } from '@streamgate/testkit';

// ioredis puts the refused command on its errors, and a refused connection's command is
// `HELLO 3 AUTH default <password>`: a relay given a wrong password logged it in every warning.
const RIGHT = 'right-pw-9f2c';
const WRONG = 'wrong-pw-71ad';

let redis: RedisServer;
let relay: RelayProcess | undefined;

beforeAll(async () => {
  redis = await startRedis();
  await redis.client().config('SET', 'requirepass', RIGHT);
});

afterAll(async () => {
  await relay?.service.stop();
  await redis?.stop();
});

describe('logs hold no credential', () => {
  it('a relay refused by Redis logs why, and never the password it sent', async () => {
    relay = await spawnRelay({
      name: 'relay-wrong-password',
      authUrl: 'http://127.0.0.1:1',
      issuer: 'https://issuer.test',
      audience: 'relay',
      redisAllowlist: redis.url,
      env: { RELAY_REDIS_PASSWORD: WRONG },
    });
    await relay.service.waitForLine(/WRONGPASS/, 15_000);
    const refused = relay.service.lines.filter((line) => line.includes('WRONGPASS'));
    expect(refused.some((line) => line.includes('<not shown>'))).toBe(true);
    expect(relay.service.lines.filter((line) => line.includes(WRONG))).toEqual([]);
  });
});

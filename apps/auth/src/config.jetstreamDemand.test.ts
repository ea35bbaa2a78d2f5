import { describe, expect, it } from 'vitest';
import { parseAuthConfig } from './config.js';
import type { AuthConfig } from './config.js';

const base = {
  AUTH_SIGNING_KEYS: '[]',
  AUTH_ISSUER: 'https://auth.local',
  AUTH_AUDIENCE: 'streamgate-relay',
  AUTH_REDIS_URL: 'nats://N1,n2:4223/TASKS',
  AUTH_DEMAND_PREFIXES: 'evm:',
};

function config(env: Record<string, string | undefined>): AuthConfig {
  const result = parseAuthConfig({ ...base, ...env });
  if (!result.ok) throw new Error(result.error.message);
  return result.config;
}

function problems(env: Record<string, string | undefined>): string[] {
  const result = parseAuthConfig({ ...base, ...env });
  if (result.ok) throw new Error('expected a config error');
  expect(result.error).toMatchObject({ code: 'config_invalid', retryable: false });
  return result.error.problems.map((p) => p.message);
}

describe('a JetStream target in AUTH_REDIS_URL, and AUTH_JETSTREAM_DEMAND_TARGET', () => {
  it('names the JetStream target in normal form, and registers its demand in the Redis named', () => {
    expect(config({ AUTH_JETSTREAM_DEMAND_TARGET: 'redis://Ingest:6379' })).toMatchObject({
      redisTargets: ['nats://n1:4222,n2:4223/TASKS'],
      jetStreamDemandTarget: 'redis://ingest:6379/0',
    });
    expect(config({ AUTH_REDIS_URL: ' tls://js ', AUTH_JETSTREAM_DEMAND_TARGET: 'redis-cluster://seed:7000' })).toMatchObject({
      redisTargets: ['tls://js:4222/STREAMGATE'],
      jetStreamDemandTarget: 'redis-cluster://seed:7000',
    });
  });

  it('is required with a JetStream target when minting registers demand, and only then', () => {
    expect(problems({})).toEqual([
      "AUTH_JETSTREAM_DEMAND_TARGET (unset): is required when AUTH_DEMAND_PREFIXES is set and tokens name the JetStream target nats://n1:4222,n2:4223/TASKS: a JetStream target has no Redis of its own for ingest's demand set; set it to the Redis target your ingest keeps its leases and demand in (its INGEST_REDIS_URL without credentials), e.g. redis://redis:6379/0",
    ]);
    expect(config({ AUTH_DEMAND_PREFIXES: '' }).jetStreamDemandTarget).toBeNull();
    expect(config({ AUTH_REDIS_URL: 'redis://streams:6379/0' }).jetStreamDemandTarget).toBeNull();
  });

  it('refuses a demand target that is not a Redis target without credentials, never showing them', () => {
    for (const value of ['nats://n1:4222/TASKS', 'ingest:6379', 'redis://u:hunter2@ingest:6379']) {
      const messages = problems({ AUTH_JETSTREAM_DEMAND_TARGET: value });
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatch(
        /^AUTH_JETSTREAM_DEMAND_TARGET=".*": ".*" is not a redis:\/\/.* URL without credentials; set it to the Redis target your ingest/,
      );
      expect(messages[0]).not.toContain('hunter2');
    }
  });

  it('refuses a JetStream target with credentials or a bad stream name in AUTH_REDIS_URL, naming the forms it takes', () => {
    for (const value of ['nats://u:hunter2@n1/TASKS', 'nats://n1/TASKS.x', 'nats://n1:99999']) {
      const messages = problems({ AUTH_REDIS_URL: value, AUTH_JETSTREAM_DEMAND_TARGET: 'redis://ingest:6379' });
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatch(/^AUTH_REDIS_URL=".*": must be .* or a nats:\/\/ or tls:\/\/ JetStream URL .* no credentials/);
      expect(messages[0]).not.toContain('hunter2');
    }
  });
});

import { describe, expect, it } from 'vitest';
import { parseRelayConfig } from './config.js';

const base = {
  RELAY_JWKS_URL: 'http://auth:8080/.well-known/jwks.json',
  RELAY_TOKEN_AUDIENCE: 'relay',
  RELAY_TOKEN_ISSUER: 'auth',
  RELAY_REDIS_ALLOWLIST: 'redis://Redis:6379',
};
const jetStream = { RELAY_JETSTREAM_ALLOWLIST: 'nats://n1,n2/TASKS', RELAY_DEMAND_PREFIXES: 'evm:' };
const two = { RELAY_REDIS_ALLOWLIST: 'redis://a:6379/0,redis://b:6379/0' };

function target(env: Record<string, string>): string | undefined {
  const result = parseRelayConfig({ ...base, ...env });
  if (!result.ok) throw new Error(result.error.message);
  return result.config.RELAY_JETSTREAM_DEMAND_TARGET;
}

function problems(env: Record<string, string>): string[] {
  const result = parseRelayConfig({ ...base, ...env });
  if (result.ok) throw new Error('expected a configuration error');
  expect(result.error).toMatchObject({ code: 'config_invalid', retryable: false });
  return result.error.problems.map((p) => p.message);
}

describe('RELAY_JETSTREAM_DEMAND_TARGET', () => {
  it('defaults to the only Redis target, and is normalized when set', () => {
    expect(target(jetStream)).toBe('redis://redis:6379/0');
    expect(target({ ...jetStream, RELAY_JETSTREAM_DEMAND_TARGET: ' ' })).toBe('redis://redis:6379/0');
    expect(target({ ...jetStream, ...two, RELAY_JETSTREAM_DEMAND_TARGET: 'redis://B:6379' })).toBe('redis://b:6379/0');
  });

  it('is required with several Redis targets when demand and JetStream are both on, and only then', () => {
    expect(problems({ ...jetStream, ...two })).toEqual([
      'RELAY_JETSTREAM_DEMAND_TARGET (unset): is required when RELAY_DEMAND_PREFIXES and RELAY_JETSTREAM_ALLOWLIST are both set and RELAY_REDIS_ALLOWLIST lists several targets: demand for streams on JetStream targets is recorded in one Redis, the one ingest reads it from; set it to one of redis://a:6379/0, redis://b:6379/0',
    ]);
    expect(target({ ...two, RELAY_JETSTREAM_ALLOWLIST: jetStream.RELAY_JETSTREAM_ALLOWLIST })).toBeUndefined();
    expect(target({ ...two, RELAY_DEMAND_PREFIXES: 'evm:' })).toBeUndefined();
  });

  it('must be an allowlisted Redis target: the demand heartbeat goes over that connection', () => {
    expect(problems({ ...jetStream, RELAY_JETSTREAM_DEMAND_TARGET: 'redis://ingest:6379/0' })).toEqual([
      'RELAY_JETSTREAM_DEMAND_TARGET="redis://ingest:6379/0": is redis://ingest:6379/0, which RELAY_REDIS_ALLOWLIST does not list: the relay records demand over its connection to an allowlisted Redis; add it to RELAY_REDIS_ALLOWLIST or set this to one of redis://redis:6379/0',
    ]);
  });

  it('refuses a JetStream target, a non-URL, and credentials (without showing them), naming the fix', () => {
    const fix = /set it to the RELAY_REDIS_ALLOWLIST target your ingest keeps its leases and demand in/;
    for (const value of ['nats://n1:4222/TASKS', 'redis-host:6379', 'redis://u:hunter2@redis:6379']) {
      const messages = problems({ ...jetStream, RELAY_JETSTREAM_DEMAND_TARGET: value });
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatch(
        /^RELAY_JETSTREAM_DEMAND_TARGET=".*": ".*" is not a redis:\/\/, rediss:\/\/, redis-cluster:\/\/ or rediss-cluster:\/\/ URL without credentials; /,
      );
      expect(messages[0]).toMatch(fix);
      expect(messages[0]).not.toContain('hunter2');
    }
  });

  it('takes a Redis Cluster target, and reports its problem beside the others', () => {
    expect(
      target({
        ...jetStream,
        RELAY_REDIS_ALLOWLIST: 'redis-cluster://seed:7000,redis://r:6379',
        RELAY_JETSTREAM_DEMAND_TARGET: 'redis-cluster://Seed:7000/0',
      }),
    ).toBe('redis-cluster://seed:7000');
    const messages = problems({ ...jetStream, ...two, RELAY_PORT: 'x' });
    expect(messages.map((m) => /^\w+/.exec(m)?.[0]).sort()).toEqual(['RELAY_JETSTREAM_DEMAND_TARGET', 'RELAY_PORT']);
  });
});

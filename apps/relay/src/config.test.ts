import { describe, expect, it } from 'vitest';
import { ConfigError, parseRelayConfig } from './config.js';

const base = {
  RELAY_JWKS_URL: 'http://auth:8080/.well-known/jwks.json',
  RELAY_TOKEN_AUDIENCE: 'relay',
  RELAY_TOKEN_ISSUER: 'auth',
  RELAY_REDIS_ALLOWLIST: 'redis://Redis:6379, redis://other:6380/2',
};

describe('parseRelayConfig', () => {
  it('applies defaults and normalizes the allowlist', () => {
    const config = parseRelayConfig(base);
    expect(config.RELAY_PORT).toBe(8081);
    expect(config.RELAY_TOKEN_ALGORITHMS).toEqual(['ES256', 'EdDSA']);
    expect([...config.RELAY_REDIS_ALLOWLIST]).toEqual(['redis://redis:6379/0', 'redis://other:6380/2']);
  });

  it('drains over 15 minutes by default, with the deadline a minute after the window', () => {
    const config = parseRelayConfig(base);
    expect(config.RELAY_DRAIN_WINDOW_MS).toBe(900_000);
    expect(config.RELAY_DRAIN_FAST_WINDOW_MS).toBe(10_000);
    expect(config.RELAY_DRAIN_DEADLINE_MS).toBe(960_000);
    const short = parseRelayConfig({ ...base, RELAY_DRAIN_WINDOW_MS: '20000' });
    expect(short.RELAY_DRAIN_DEADLINE_MS).toBe(80_000);
    expect(parseRelayConfig({ ...base, RELAY_DRAIN_WINDOW_MS: '20000', RELAY_DRAIN_DEADLINE_MS: '25000' }).RELAY_DRAIN_DEADLINE_MS).toBe(25_000);
  });

  it('names the variable and the fix', () => {
    const cases: Array<[Record<string, string | undefined>, RegExp]> = [
      [{ ...base, RELAY_TOKEN_AUDIENCE: undefined }, /RELAY_TOKEN_AUDIENCE.*AUTH_AUDIENCE/],
      [{ ...base, RELAY_REDIS_ALLOWLIST: 'redis://u:p@r:6379' }, /RELAY_REDIS_ALLOWLIST.*without credentials/],
      [{ ...base, RELAY_TOKEN_ALGORITHMS: 'HS256' }, /RELAY_TOKEN_ALGORITHMS/],
      [{ ...base, RELAY_JWKS_FILE: '/keys.json' }, /RELAY_JWKS_URL.*exactly one/],
      [{ ...base, RELAY_PORT: 'eighty' }, /RELAY_PORT/],
      [{ ...base, RELAY_DRAIN_WINDOW_MS: '60000', RELAY_DRAIN_DEADLINE_MS: '30000' }, /RELAY_DRAIN_DEADLINE_MS.*at least RELAY_DRAIN_WINDOW_MS/],
      [{ ...base, RELAY_DRAIN_WINDOW_MS: '-1' }, /RELAY_DRAIN_WINDOW_MS/],
    ];
    for (const [env, message] of cases) {
      expect(() => parseRelayConfig(env)).toThrow(ConfigError);
      expect(() => parseRelayConfig(env)).toThrow(message);
    }
  });
});

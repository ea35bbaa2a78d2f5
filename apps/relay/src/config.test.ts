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

  it('names the variable and the fix', () => {
    const cases: Array<[Record<string, string | undefined>, RegExp]> = [
      [{ ...base, RELAY_TOKEN_AUDIENCE: undefined }, /RELAY_TOKEN_AUDIENCE.*AUTH_AUDIENCE/],
      [{ ...base, RELAY_REDIS_ALLOWLIST: 'redis://u:p@r:6379' }, /RELAY_REDIS_ALLOWLIST.*without credentials/],
      [{ ...base, RELAY_TOKEN_ALGORITHMS: 'HS256' }, /RELAY_TOKEN_ALGORITHMS/],
      [{ ...base, RELAY_JWKS_FILE: '/keys.json' }, /RELAY_JWKS_URL.*exactly one/],
      [{ ...base, RELAY_PORT: 'eighty' }, /RELAY_PORT/],
    ];
    for (const [env, message] of cases) {
      expect(() => parseRelayConfig(env)).toThrow(ConfigError);
      expect(() => parseRelayConfig(env)).toThrow(message);
    }
  });
});

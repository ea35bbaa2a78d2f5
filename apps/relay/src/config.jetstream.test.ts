import { describe, expect, it } from 'vitest';
import { parseRelayConfig } from './config.js';

const base = {
  RELAY_JWKS_URL: 'http://auth:8080/.well-known/jwks.json',
  RELAY_TOKEN_AUDIENCE: 'relay',
  RELAY_TOKEN_ISSUER: 'auth',
  RELAY_REDIS_ALLOWLIST: 'redis://redis:6379',
};

describe('RELAY_JETSTREAM_ALLOWLIST', () => {
  it('is empty unset, and lists space-separated targets in normal form', () => {
    const unset = parseRelayConfig(base);
    expect(unset.ok && [...unset.config.RELAY_JETSTREAM_ALLOWLIST]).toEqual([]);
    const parsed = parseRelayConfig({ ...base, RELAY_JETSTREAM_ALLOWLIST: ' nats://N1,n2:4223  tls://js/TASKS ' });
    expect(parsed.ok && [...parsed.config.RELAY_JETSTREAM_ALLOWLIST]).toEqual(['nats://n1:4222,n2:4223/STREAMGATE', 'tls://js:4222/TASKS']);
  });

  it('refuses a target with credentials without showing them, and names the fix', () => {
    const parsed = parseRelayConfig({ ...base, RELAY_JETSTREAM_ALLOWLIST: 'nats://n1 nats://u:hunter2@n2', RELAY_NATS_PASSWORD: 'pw' });
    expect(parsed.ok).toBe(false);
    const message = parsed.ok ? '' : parsed.error.message;
    expect(message).toMatch(/RELAY_JETSTREAM_ALLOWLIST.*"nats:\/\/<credentials>@n2" is not a JetStream target.*RELAY_NATS_USERNAME/);
    expect(message).not.toContain('hunter2');
  });
});

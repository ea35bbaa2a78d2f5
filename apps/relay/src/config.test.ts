import { describe, expect, it } from 'vitest';
import { parseRelayConfig } from './config.js';
import type { RelayConfig } from './config.js';

const base = {
  RELAY_JWKS_URL: 'http://auth:8080/.well-known/jwks.json',
  RELAY_TOKEN_AUDIENCE: 'relay',
  RELAY_TOKEN_ISSUER: 'auth',
  RELAY_REDIS_ALLOWLIST: 'redis://Redis:6379, redis://other:6380/2',
};

function config(env: Record<string, string | undefined>): RelayConfig {
  const result = parseRelayConfig(env);
  if (!result.ok) throw new Error(result.error.message);
  return result.config;
}

function problems(env: Record<string, string | undefined>): string[] {
  const result = parseRelayConfig(env);
  if (result.ok) throw new Error('expected a configuration error');
  expect(result.error).toMatchObject({ code: 'config_invalid', retryable: false });
  expect(result.error.message).toContain(
    `invalid relay configuration (${result.error.problems.length === 1 ? '1 problem' : `${result.error.problems.length} problems`})`,
  );
  return result.error.problems.map((p) => p.message);
}

describe('parseRelayConfig', () => {
  it('refuses a JWKS URL with a user or password, without showing them', () => {
    // fetch refuses such a URL: the relay would never load its keys and log the password at every try.
    expect(problems({ ...base, RELAY_JWKS_URL: 'http://user:s3cretpw@auth:8080/jwks' })).toEqual([
      'RELAY_JWKS_URL="http://<credentials>@auth:8080/jwks": must not carry a user or password (fetch refuses such a URL); serve it without them, e.g. http://auth:8080/.well-known/jwks.json',
    ]);
  });

  it('refuses a node id too long to name the pod in operations snapshots', () => {
    expect(config({ ...base, RELAY_NODE_ID: 'n'.repeat(120) }).RELAY_NODE_ID).toHaveLength(120);
    expect(problems({ ...base, RELAY_NODE_ID: 'n'.repeat(121) })[0]).toMatch(
      /^RELAY_NODE_ID="n+…": must be at most 120 characters .*; got 121$/,
    );
  });

  it('applies defaults and normalizes the allowlist', () => {
    const parsed = config(base);
    expect(parsed.RELAY_PORT).toBe(8081);
    expect(parsed.RELAY_TOKEN_ALGORITHMS).toEqual(['ES256', 'EdDSA']);
    expect([...parsed.RELAY_REDIS_ALLOWLIST]).toEqual(['redis://redis:6379/0', 'redis://other:6380/2']);
  });

  it('drains over 15 minutes by default, with the deadline a minute after the window', () => {
    const parsed = config(base);
    expect(parsed.RELAY_DRAIN_WINDOW_MS).toBe(900_000);
    expect(parsed.RELAY_DRAIN_FAST_WINDOW_MS).toBe(10_000);
    expect(parsed.RELAY_DRAIN_DEADLINE_MS).toBe(960_000);
    expect(config({ ...base, RELAY_DRAIN_WINDOW_MS: '20000' }).RELAY_DRAIN_DEADLINE_MS).toBe(80_000);
    expect(config({ ...base, RELAY_DRAIN_WINDOW_MS: '20000', RELAY_DRAIN_DEADLINE_MS: '25000' }).RELAY_DRAIN_DEADLINE_MS).toBe(25_000);
  });

  it('takes a blank value as unset: the default, never 0', () => {
    const parsed = config({
      ...base,
      RELAY_PORT: '',
      RELAY_CLOCK_SKEW_SECONDS: ' ',
      RELAY_DRAIN_WINDOW_MS: '',
      RELAY_DRAIN_DEADLINE_MS: '',
      RELAY_STREAM_LINGER_MS: '',
      RELAY_TOKEN_ALGORITHMS: '',
      LOG_LEVEL: '',
    });
    expect(parsed).toMatchObject({
      RELAY_PORT: 8081,
      RELAY_CLOCK_SKEW_SECONDS: 30,
      RELAY_DRAIN_WINDOW_MS: 900_000,
      RELAY_DRAIN_DEADLINE_MS: 960_000,
      RELAY_STREAM_LINGER_MS: 5_000,
      RELAY_TOKEN_ALGORITHMS: ['ES256', 'EdDSA'],
      LOG_LEVEL: 'info',
    });
    expect(config({ ...base, RELAY_JWKS_FILE: '' }).RELAY_JWKS_FILE).toBeUndefined();
  });

  it('refuses a blank required variable, naming it and the fix', () => {
    expect(problems({ ...base, RELAY_TOKEN_AUDIENCE: '' })).toEqual([
      'RELAY_TOKEN_AUDIENCE="": is required; set it to the `aud` the auth service puts in tokens (its AUTH_AUDIENCE)',
    ]);
    expect(problems({ ...base, RELAY_REDIS_ALLOWLIST: undefined })).toEqual([
      'RELAY_REDIS_ALLOWLIST (unset): is required; set it to the comma-separated redis:// URLs tokens may name, e.g. redis://redis:6379/0',
    ]);
  });

  it('names the variable, the problem with its value and the fix', () => {
    expect(problems({ ...base, RELAY_PORT: 'abc' })).toEqual([
      'RELAY_PORT="abc": must be an integer from 0 to 65535 (0 = any free port); set it to a port number or leave it unset for 8081',
    ]);
    expect(problems({ ...base, RELAY_CLOCK_SKEW_SECONDS: '301' })).toEqual([
      'RELAY_CLOCK_SKEW_SECONDS="301": must be an integer from 0 to 300 (0 = no tolerance); set it to an integer in that range or leave it unset for 30',
    ]);
    expect(problems({ ...base, RELAY_XREAD_COUNT: '1e3' })[0]).toMatch(/^RELAY_XREAD_COUNT="1e3": must be an integer from 1 to 100000;/);
    expect(problems({ ...base, RELAY_TOKEN_ALGORITHMS: 'ES256,HS256' })).toEqual([
      'RELAY_TOKEN_ALGORITHMS="ES256,HS256": "HS256" is not an accepted algorithm; list algorithms from ES256, EdDSA',
    ]);
    expect(problems({ ...base, RELAY_JWKS_FILE: '/keys.json' })[0]).toMatch(
      /^RELAY_JWKS_URL=".*": and RELAY_JWKS_FILE are both set; set exactly one/,
    );
    expect(problems({ ...base, RELAY_DRAIN_WINDOW_MS: '60000', RELAY_DRAIN_DEADLINE_MS: '30000' })[0]).toMatch(
      /^RELAY_DRAIN_DEADLINE_MS="30000": must be at least RELAY_DRAIN_WINDOW_MS \(60000\)/,
    );
    expect(problems({ ...base, RELAY_DRAIN_WINDOW_MS: '-1' })[0]).toMatch(
      /^RELAY_DRAIN_WINDOW_MS="-1": must be an integer from 0 to 86400000/,
    );
  });

  it('never prints credentials: the password is not shown, a URL user:password is masked', () => {
    const messages = problems({
      ...base,
      RELAY_REDIS_ALLOWLIST: 'redis://u:hunter2@r:6379',
      RELAY_REDIS_PASSWORD: 'hunter2',
      RELAY_PORT: 'x',
    });
    expect(messages.join('\n')).not.toContain('hunter2');
    expect(messages.find((m) => m.startsWith('RELAY_REDIS_ALLOWLIST'))).toMatch(/redis:\/\/<credentials>@r:6379.*without credentials/);
  });

  it('takes Redis Cluster targets, but refuses RELAY_READ_MODE=batch with one (a cluster is read notification-driven only)', () => {
    const allowlist = 'redis://r:6379/0, redis-cluster://Seed:7000/0';
    expect([...config({ ...base, RELAY_REDIS_ALLOWLIST: allowlist }).RELAY_REDIS_ALLOWLIST]).toEqual([
      'redis://r:6379/0',
      'redis-cluster://seed:7000',
    ]);
    expect(config({ ...base, RELAY_REDIS_ALLOWLIST: allowlist, RELAY_READ_MODE: 'notify' }).RELAY_READ_MODE).toBe('notify');
    const messages = problems({ ...base, RELAY_REDIS_ALLOWLIST: allowlist, RELAY_READ_MODE: 'batch' });
    expect(messages).toEqual([
      expect.stringMatching(/^RELAY_READ_MODE.*RELAY_REDIS_ALLOWLIST names the Redis Cluster redis-cluster:\/\/seed:7000/),
    ]);
    expect(problems({ ...base, RELAY_REDIS_ALLOWLIST: 'redis-cluster://seed:7000/3' }).join('\n')).toMatch(
      /^RELAY_REDIS_ALLOWLIST.*redis-cluster:\/\//,
    );
  });

  it('reports every problem at once, cross-variable ones included', () => {
    const messages = problems({
      RELAY_PORT: 'abc',
      RELAY_CLOCK_SKEW_SECONDS: '-5',
      RELAY_TOKEN_ISSUER: '',
      RELAY_REDIS_ALLOWLIST: 'http://r',
      RELAY_DRAIN_WINDOW_MS: '60000',
      RELAY_DRAIN_DEADLINE_MS: '30000',
    });
    expect(messages.map((m) => /^\w+/.exec(m)?.[0]).sort()).toEqual(
      [
        'RELAY_CLOCK_SKEW_SECONDS',
        'RELAY_DRAIN_DEADLINE_MS',
        'RELAY_JWKS_URL',
        'RELAY_PORT',
        'RELAY_REDIS_ALLOWLIST',
        'RELAY_TOKEN_AUDIENCE',
        'RELAY_TOKEN_ISSUER',
      ].sort(),
    );
  });

  it('publishes operations snapshots only when RELAY_OPS_REDIS_URL is set, credentials allowed, never shown', () => {
    expect(config(base).RELAY_OPS_REDIS_URL).toBeUndefined();
    expect(config(base).RELAY_OPS_STREAM).toBe('streamgate:ops');
    const blank = config({ ...base, RELAY_OPS_REDIS_URL: ' ', RELAY_OPS_STREAM: '' });
    expect([blank.RELAY_OPS_REDIS_URL, blank.RELAY_OPS_STREAM]).toEqual([undefined, 'streamgate:ops']);
    expect(config({ ...base, RELAY_OPS_REDIS_URL: 'redis://:pw@ops:6379/1', RELAY_OPS_STREAM: 'fleet:ops' })).toMatchObject({
      RELAY_OPS_REDIS_URL: 'redis://:pw@ops:6379/1',
      RELAY_OPS_STREAM: 'fleet:ops',
    });
    const messages = problems({ ...base, RELAY_OPS_REDIS_URL: 'http://u:hunter2@ops:6379', RELAY_OPS_STREAM: 'a b' });
    expect(messages.map((m) => /^\w+/.exec(m)?.[0]).sort()).toEqual(['RELAY_OPS_REDIS_URL', 'RELAY_OPS_STREAM']);
    expect(messages.join('\n')).not.toContain('hunter2');
  });
});

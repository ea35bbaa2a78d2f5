import { describe, expect, it } from 'vitest';
import { parseAuthConfig } from './config.js';

const base = {
  AUTH_SIGNING_KEYS: '[]',
  AUTH_ISSUER: 'https://auth.local',
  AUTH_AUDIENCE: 'streamgate-relay',
  AUTH_REDIS_URL: 'redis://streams:6379/0',
};

function failure(env: Record<string, string | undefined>) {
  const result = parseAuthConfig(env);
  if (result.ok) throw new Error('expected a config error');
  expect(result.error.code).toBe('config_invalid');
  expect(result.error.retryable).toBe(false);
  expect(result.error.message.startsWith(result.error.variable)).toBe(true);
  return result.error;
}

describe('parseAuthConfig', () => {
  it('applies defaults', () => {
    expect(parseAuthConfig(base)).toEqual({
      ok: true,
      config: {
        host: '0.0.0.0',
        port: 8080,
        signingKeys: { kind: 'inline', json: '[]' },
        issuer: 'https://auth.local',
        audience: 'streamgate-relay',
        tokenTtlSeconds: 300,
        redisUrl: 'redis://streams:6379/0',
        demandPrefixes: [],
        demandTtlMs: 30_000,
        logLevel: 'info',
      },
    });
  });

  it('reads every variable', () => {
    const result = parseAuthConfig({
      ...base,
      AUTH_SIGNING_KEYS: undefined,
      AUTH_SIGNING_KEYS_FILE: '/run/secrets/keys.json',
      AUTH_HOST: '127.0.0.1',
      AUTH_PORT: '0',
      AUTH_TOKEN_TTL_SECONDS: '60',
      LOG_LEVEL: 'debug',
    });
    expect(result).toMatchObject({
      ok: true,
      config: { host: '127.0.0.1', port: 0, tokenTtlSeconds: 60, logLevel: 'debug', signingKeys: { kind: 'file', path: '/run/secrets/keys.json' } },
    });
    expect(parseAuthConfig({ ...base, AUTH_SIGNING_KEYS: '', AUTH_DEV_GENERATE_KEYS: 'true' })).toMatchObject({
      ok: true,
      config: { signingKeys: { kind: 'generate' } },
    });
  });

  it('names the variable and the fix', () => {
    expect(failure({ ...base, AUTH_ISSUER: undefined })).toMatchObject({ variable: 'AUTH_ISSUER', message: expect.stringMatching(/required/) as string });
    expect(failure({ ...base, AUTH_AUDIENCE: ' ' }).variable).toBe('AUTH_AUDIENCE');
    expect(failure({ ...base, AUTH_PORT: 'http' })).toMatchObject({ variable: 'AUTH_PORT', message: expect.stringMatching(/integer.*TCP port/) as string });
    expect(failure({ ...base, AUTH_PORT: '70000' }).message).toMatch(/AUTH_PORT must be at most 65535/);
    expect(failure({ ...base, AUTH_TOKEN_TTL_SECONDS: '0' }).variable).toBe('AUTH_TOKEN_TTL_SECONDS');
    expect(failure({ ...base, AUTH_REDIS_URL: 'redis://user:secret@streams:6379' })).toMatchObject({
      variable: 'AUTH_REDIS_URL',
      message: expect.stringMatching(/no credentials/) as string,
    });
    expect(failure({ ...base, AUTH_REDIS_URL: undefined }).message).toMatch(/AUTH_REDIS_URL is required/);
    expect(failure({ ...base, LOG_LEVEL: 'loud' }).variable).toBe('LOG_LEVEL');
    expect(failure({ ...base, AUTH_DEV_GENERATE_KEYS: 'yes' }).variable).toBe('AUTH_DEV_GENERATE_KEYS');
  });

  it('requires exactly one key source, and no generated keys in production', () => {
    expect(failure({ ...base, AUTH_SIGNING_KEYS: undefined })).toMatchObject({
      variable: 'AUTH_SIGNING_KEYS',
      message: expect.stringMatching(/AUTH_SIGNING_KEYS_FILE/) as string,
    });
    expect(failure({ ...base, AUTH_SIGNING_KEYS_FILE: '/k.json' })).toMatchObject({
      variable: 'AUTH_SIGNING_KEYS_FILE',
      message: expect.stringMatching(/conflicts with AUTH_SIGNING_KEYS/) as string,
    });
    expect(
      failure({ ...base, AUTH_SIGNING_KEYS: undefined, AUTH_DEV_GENERATE_KEYS: 'true', NODE_ENV: 'production' }).variable,
    ).toBe('AUTH_DEV_GENERATE_KEYS');
  });
});

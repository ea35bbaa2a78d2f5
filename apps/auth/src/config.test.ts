import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { parseAuthConfig } from './config.js';

const base = {
  AUTH_SIGNING_KEYS: '[]',
  AUTH_ISSUER: 'https://auth.local',
  AUTH_AUDIENCE: 'streamgate-relay',
  AUTH_REDIS_URL: 'redis://streams:6379/0',
};

/** The first (here: only) problem, as { variable, message }; every message starts with its variable. */
function failure(env: Record<string, string | undefined>) {
  const result = parseAuthConfig(env);
  if (result.ok) throw new Error('expected a config error');
  expect(result.error.code).toBe('config_invalid');
  expect(result.error.retryable).toBe(false);
  for (const problem of result.error.problems) expect(problem.message.startsWith(problem.variable)).toBe(true);
  const first = result.error.problems[0];
  if (first === undefined) throw new Error('a config error without problems');
  return first;
}

describe('parseAuthConfig', () => {
  it('refuses a pod name too long to name the pod in operations snapshots', () => {
    expect(failure({ ...base, AUTH_POD_NAME: 'p'.repeat(121) }).message).toMatch(/^AUTH_POD_NAME="p+…": must be at most 120 characters/);
    expect(parseAuthConfig({ ...base, AUTH_POD_NAME: 'p'.repeat(120) }).ok).toBe(true);
  });

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
        redisTargets: ['redis://streams:6379/0'],
        demandPrefixes: [],
        demandTtlMs: 30_000,
        jetStreamDemandTarget: null,
        demoRouter: false,
        cors: null,
        exposeStackTraces: false,
        logLevel: 'info',
        podName: hostname(),
        ops: null,
        operatorCredentialSha256: null,
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
      config: {
        host: '127.0.0.1',
        port: 0,
        tokenTtlSeconds: 60,
        logLevel: 'debug',
        signingKeys: { kind: 'file', path: '/run/secrets/keys.json' },
      },
    });
    expect(parseAuthConfig({ ...base, AUTH_SIGNING_KEYS: '', AUTH_DEV_GENERATE_KEYS: 'true' })).toMatchObject({
      ok: true,
      config: { signingKeys: { kind: 'generate' } },
    });
  });

  it('names the variable and the fix', () => {
    expect(failure({ ...base, AUTH_ISSUER: undefined })).toMatchObject({
      variable: 'AUTH_ISSUER',
      message: expect.stringMatching(/required/) as string,
    });
    expect(failure({ ...base, AUTH_AUDIENCE: ' ' }).variable).toBe('AUTH_AUDIENCE');
    expect(failure({ ...base, AUTH_PORT: 'http' })).toEqual({
      variable: 'AUTH_PORT',
      message:
        'AUTH_PORT="http": must be an integer from 0 to 65535 (0 = any free port); set it to a port number or leave it unset for 8080',
    });
    expect(failure({ ...base, AUTH_PORT: '70000' }).message).toMatch(/^AUTH_PORT="70000": must be an integer from 0 to 65535/);
    expect(failure({ ...base, AUTH_TOKEN_TTL_SECONDS: '0' }).variable).toBe('AUTH_TOKEN_TTL_SECONDS');
    expect(failure({ ...base, AUTH_REDIS_URL: 'redis://user:secret@streams:6379' })).toMatchObject({
      variable: 'AUTH_REDIS_URL',
      message: expect.stringMatching(/no credentials/) as string,
    });
    expect(failure({ ...base, AUTH_REDIS_URL: undefined }).message).toMatch(
      /^AUTH_REDIS_URL \(unset\): is required; set it to the Redis URL/,
    );
    expect(failure({ ...base, LOG_LEVEL: 'loud' }).variable).toBe('LOG_LEVEL');
    expect(failure({ ...base, AUTH_DEV_GENERATE_KEYS: 'yes' }).variable).toBe('AUTH_DEV_GENERATE_KEYS');
  });

  it('takes one Redis (an instance or a cluster) or a list of instances, normalized, not both', () => {
    expect(parseAuthConfig({ ...base, AUTH_REDIS_URL: 'redis-cluster://Seed:7000/0' })).toMatchObject({
      ok: true,
      config: { redisTargets: ['redis-cluster://seed:7000'] },
    });
    expect(parseAuthConfig({ ...base, AUTH_REDIS_URL: '', AUTH_REDIS_TARGETS: 'redis://R0, redis://r1:6380/2 ,' })).toMatchObject({
      ok: true,
      config: { redisTargets: ['redis://r0:6379/0', 'redis://r1:6380/2'] },
    });
    expect(failure({ ...base, AUTH_REDIS_TARGETS: 'redis://r0' })).toMatchObject({
      variable: 'AUTH_REDIS_TARGETS',
      message: expect.stringMatching(/conflicts with AUTH_REDIS_URL/) as string,
    });
    // A list of nothing is named for what it is, not taken for unset (then "AUTH_REDIS_URL is required").
    expect(failure({ ...base, AUTH_REDIS_URL: undefined, AUTH_REDIS_TARGETS: ',' })).toMatchObject({
      variable: 'AUTH_REDIS_TARGETS',
      message: expect.stringMatching(/^AUTH_REDIS_TARGETS=",": holds no item/) as string,
    });
    const withCredentials = failure({ ...base, AUTH_REDIS_URL: undefined, AUTH_REDIS_TARGETS: 'redis://r0,redis://u:pw@r1' });
    expect(withCredentials).toMatchObject({
      variable: 'AUTH_REDIS_TARGETS',
      message: expect.stringMatching(/"redis:\/\/<credentials>@r1" is not a redis/) as string,
    });
    // The message goes to logs: the password is never in it.
    expect(JSON.stringify(withCredentials)).not.toContain('pw');
    expect(failure({ ...base, AUTH_REDIS_URL: undefined, AUTH_REDIS_TARGETS: 'redis://r0,redis://R0:6379/0' })).toMatchObject({
      variable: 'AUTH_REDIS_TARGETS',
      message: expect.stringMatching(/lists redis:\/\/r0:6379\/0 twice/) as string,
    });
  });

  it('takes a blank value as unset: the default, never 0', () => {
    expect(parseAuthConfig({ ...base, AUTH_PORT: '', AUTH_TOKEN_TTL_SECONDS: ' ', AUTH_DEMAND_TTL_MS: '', LOG_LEVEL: '' })).toMatchObject({
      ok: true,
      config: { port: 8080, tokenTtlSeconds: 300, demandTtlMs: 30_000, logLevel: 'info' },
    });
  });

  it('never prints the signing keys', () => {
    const result = parseAuthConfig({ ...base, AUTH_SIGNING_KEYS: '[{"d":"private"}]', AUTH_SIGNING_KEYS_FILE: '/k.json', AUTH_PORT: 'x' });
    if (result.ok) throw new Error('expected a config error');
    expect(result.error.message).not.toContain('private');
  });

  it('reports every problem at once', () => {
    const result = parseAuthConfig({
      AUTH_PORT: 'abc',
      AUTH_ISSUER: '',
      AUTH_TOKEN_TTL_SECONDS: '0',
      AUTH_REDIS_URL: 'redis://u:p@r:6379',
    });
    if (result.ok) throw new Error('expected a config error');
    expect(result.error.problems.map((p) => p.variable).sort()).toEqual(
      ['AUTH_AUDIENCE', 'AUTH_ISSUER', 'AUTH_PORT', 'AUTH_REDIS_URL', 'AUTH_SIGNING_KEYS', 'AUTH_TOKEN_TTL_SECONDS'].sort(),
    );
    expect(result.error.message).toMatch(/^invalid auth configuration \(6 problems\):\n/);
    expect(result.error.message).not.toContain('u:p@');
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
    expect(failure({ ...base, AUTH_SIGNING_KEYS: undefined, AUTH_DEV_GENERATE_KEYS: 'true', NODE_ENV: 'production' }).variable).toBe(
      'AUTH_DEV_GENERATE_KEYS',
    );
  });

  it('serves the demo router only when asked, and never in production', () => {
    expect(parseAuthConfig({ ...base, AUTH_DEMO_ROUTER: 'true', NODE_ENV: 'test' })).toMatchObject({
      ok: true,
      config: { demoRouter: true },
    });
    expect(failure({ ...base, AUTH_DEMO_ROUTER: 'true', NODE_ENV: 'production' })).toMatchObject({
      variable: 'AUTH_DEMO_ROUTER',
      message: expect.stringMatching(/refused with NODE_ENV=production/) as string,
    });
    expect(parseAuthConfig({ ...base, AUTH_DEMO_ROUTER: 'false', NODE_ENV: 'production' }).ok).toBe(true);
  });

  it('shows stack traces only in development', () => {
    expect(parseAuthConfig({ ...base, NODE_ENV: 'development' })).toMatchObject({ ok: true, config: { exposeStackTraces: true } });
    expect(parseAuthConfig({ ...base, NODE_ENV: 'test' })).toMatchObject({ ok: true, config: { exposeStackTraces: false } });
  });

  it('reads the CORS origins, exactly as browsers send them', () => {
    expect(
      parseAuthConfig({ ...base, AUTH_CORS_ORIGINS: 'https://app.example.com, http://localhost:5173', AUTH_CORS_CREDENTIALS: 'true' }),
    ).toMatchObject({
      ok: true,
      config: { cors: { origins: ['https://app.example.com', 'http://localhost:5173'], credentials: true, maxAgeSeconds: 600 } },
    });
    expect(parseAuthConfig({ ...base, AUTH_CORS_ORIGINS: '*', AUTH_CORS_MAX_AGE_SECONDS: '60' })).toMatchObject({
      ok: true,
      config: { cors: { origins: ['*'], credentials: false, maxAgeSeconds: 60 } },
    });
    expect(parseAuthConfig({ ...base, AUTH_CORS_ORIGINS: ' ' })).toMatchObject({ ok: true, config: { cors: null } });
    for (const bad of ['https://app.example.com/', 'app.example.com', 'https://app.example.com/path', 'ftp://x.example']) {
      expect(failure({ ...base, AUTH_CORS_ORIGINS: bad }).variable).toBe('AUTH_CORS_ORIGINS');
    }
    expect(failure({ ...base, AUTH_CORS_ORIGINS: '*,https://a.example' }).variable).toBe('AUTH_CORS_ORIGINS');
  });

  it('refuses credentials with a wildcard origin or without origins', () => {
    expect(failure({ ...base, AUTH_CORS_ORIGINS: '*', AUTH_CORS_CREDENTIALS: 'true' })).toMatchObject({
      variable: 'AUTH_CORS_CREDENTIALS',
      message: expect.stringMatching(/refused with AUTH_CORS_ORIGINS=\*/) as string,
    });
    expect(failure({ ...base, AUTH_CORS_CREDENTIALS: 'true' }).variable).toBe('AUTH_CORS_CREDENTIALS');
  });

  it('reads the operations stream and the operator credential hash; blank is off', () => {
    const hash = 'AB'.repeat(32);
    expect(
      parseAuthConfig({
        ...base,
        AUTH_POD_NAME: 'auth-0',
        AUTH_OPS_REDIS_URL: 'redis://ops-user:s3cret@Ops.Local:6380/1',
        AUTH_OPS_STREAM: 'fleet:ops',
        AUTH_OPERATOR_CREDENTIAL_SHA256: hash,
      }),
    ).toMatchObject({
      ok: true,
      config: {
        podName: 'auth-0',
        ops: { redisUrl: 'redis://ops-user:s3cret@Ops.Local:6380/1', target: 'redis://ops.local:6380/1', stream: 'fleet:ops' },
        operatorCredentialSha256: hash.toLowerCase(),
      },
    });
    expect(parseAuthConfig({ ...base, AUTH_OPS_REDIS_URL: 'redis://ops:6379' })).toMatchObject({
      ok: true,
      config: { ops: { target: 'redis://ops:6379/0', stream: 'streamgate:ops' }, operatorCredentialSha256: null },
    });
    expect(parseAuthConfig({ ...base, AUTH_OPS_REDIS_URL: ' ', AUTH_OPERATOR_CREDENTIAL_SHA256: '', AUTH_OPS_STREAM: '' })).toMatchObject({
      ok: true,
      config: { ops: null, operatorCredentialSha256: null },
    });
  });

  it('refuses a credential hash that is not one, or one without the ops Redis, and never prints it', () => {
    const bad = failure({ ...base, AUTH_OPS_REDIS_URL: 'redis://ops:6379', AUTH_OPERATOR_CREDENTIAL_SHA256: 'hunter2' });
    expect(bad.variable).toBe('AUTH_OPERATOR_CREDENTIAL_SHA256');
    expect(bad.message).toMatch(/64 hex digits/);
    expect(bad.message).not.toContain('hunter2');
    expect(failure({ ...base, AUTH_OPERATOR_CREDENTIAL_SHA256: 'a'.repeat(64) })).toMatchObject({
      variable: 'AUTH_OPERATOR_CREDENTIAL_SHA256',
      message: expect.stringMatching(/needs AUTH_OPS_REDIS_URL/) as string,
    });
    expect(failure({ ...base, AUTH_OPS_REDIS_URL: 'http://ops:6379' }).variable).toBe('AUTH_OPS_REDIS_URL');
    expect(failure({ ...base, AUTH_OPS_REDIS_URL: 'redis://ops:6379', AUTH_OPS_STREAM: 'has space' }).variable).toBe('AUTH_OPS_STREAM');
    const masked = parseAuthConfig({ ...base, AUTH_OPS_REDIS_URL: 'redis://u:s3cret@ops:6379/abc' });
    if (masked.ok) throw new Error('expected a config error');
    expect(masked.error.message).not.toContain('s3cret');
  });
});

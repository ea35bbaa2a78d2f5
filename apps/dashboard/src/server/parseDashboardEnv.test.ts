import { describe, expect, it } from 'vitest';
import { parseDashboardEnv } from './parseDashboardEnv.js';

const base = { DASHBOARD_AUTH_URL: 'https://auth.streamgate.example', DASHBOARD_RELAY_URL: 'wss://relay.streamgate.example/v1/ws' };

/** The problems of a refused environment; every message starts with its variable. */
function problems(env: Record<string, string | undefined>) {
  const result = parseDashboardEnv(env);
  if (result.ok) throw new Error('expected a config error');
  expect(result.error.code).toBe('config_invalid');
  expect(result.error.retryable).toBe(false);
  for (const problem of result.error.problems) expect(problem.message.startsWith(problem.variable)).toBe(true);
  return result.error.problems;
}

describe('parseDashboardEnv', () => {
  it('applies defaults', () => {
    expect(parseDashboardEnv(base)).toEqual({
      ok: true,
      config: {
        host: '0.0.0.0',
        port: 8084,
        page: { authUrl: 'https://auth.streamgate.example', relayUrl: 'wss://relay.streamgate.example/v1/ws' },
        pageDir: undefined,
        logLevel: 'info',
      },
    });
  });

  it('reads every variable', () => {
    expect(
      parseDashboardEnv({
        DASHBOARD_HOST: '127.0.0.1',
        DASHBOARD_PORT: '0',
        DASHBOARD_AUTH_URL: 'http://127.0.0.1:8080',
        DASHBOARD_RELAY_URL: 'ws://127.0.0.1:8081/v1/ws',
        DASHBOARD_PAGE_DIR: '/srv/dashboard',
        LOG_LEVEL: 'debug',
      }),
    ).toEqual({
      ok: true,
      config: {
        host: '127.0.0.1',
        port: 0,
        page: { authUrl: 'http://127.0.0.1:8080', relayUrl: 'ws://127.0.0.1:8081/v1/ws' },
        pageDir: '/srv/dashboard',
        logLevel: 'debug',
      },
    });
  });

  it('names the variable and the fix', () => {
    expect(problems({ ...base, DASHBOARD_PORT: 'http' })).toEqual([
      {
        variable: 'DASHBOARD_PORT',
        message:
          'DASHBOARD_PORT="http": must be an integer from 0 to 65535 (0 = any free port); set it to a port number or leave it unset for 8084',
      },
    ]);
    expect(problems({ ...base, DASHBOARD_AUTH_URL: undefined })[0]?.message).toMatch(
      /^DASHBOARD_AUTH_URL \(unset\): is required; set it to the auth service as browsers reach it/,
    );
    expect(problems({ ...base, DASHBOARD_AUTH_URL: 'ws://auth:8080' })[0]?.message).toMatch(
      /^DASHBOARD_AUTH_URL="ws:\/\/auth:8080": must be an http:\/\/ or https:\/\/ URL; set it to/,
    );
    expect(problems({ ...base, DASHBOARD_AUTH_URL: 'https://ops.example/auth' })[0]?.message).toMatch(
      /^DASHBOARD_AUTH_URL="https:\/\/ops\.example\/auth": must have no path \(the page calls \/trpc\/ops\.token on its origin\)/,
    );
    expect(parseDashboardEnv({ ...base, DASHBOARD_AUTH_URL: 'https://auth.streamgate.example/' }).ok).toBe(true);
    expect(problems({ ...base, DASHBOARD_RELAY_URL: 'https://relay/v1/ws' })[0]?.message).toMatch(
      /^DASHBOARD_RELAY_URL="https:\/\/relay\/v1\/ws": must be a ws:\/\/ or wss:\/\/ URL; set it to/,
    );
    expect(problems({ ...base, DASHBOARD_RELAY_URL: 'not a url' })[0]?.variable).toBe('DASHBOARD_RELAY_URL');
    // Both are handed to every browser in /config.json and logged at boot.
    for (const [variable, raw] of [
      ['DASHBOARD_AUTH_URL', 'http://u:s3cretpw@auth:8080'],
      ['DASHBOARD_RELAY_URL', 'ws://u:s3cretpw@relay:8081/v1/ws'],
    ] as const) {
      const [problem] = problems({ ...base, [variable]: raw });
      expect(problem?.message).toMatch(new RegExp(`^${variable}=".*<credentials>@.*": must not carry a user or password`));
      expect(problem?.message).not.toMatch(/s3cretpw/);
    }
    expect(problems({ ...base, DASHBOARD_RELAY_URL: 'ws://relay:8081/v1/ws?token=x' })[0]?.message).toMatch(
      /must have no query or fragment/,
    );
    expect(problems({ ...base, DASHBOARD_AUTH_URL: 'http://auth:8080?x=1' })[0]?.message).toMatch(/must have no query or fragment/);
    expect(problems({ ...base, DASHBOARD_RELAY_URL: 'ws://relay:8081' })[0]?.message).toMatch(
      /must end in \/v1\/ws, the relay's WebSocket path/,
    );
    expect(parseDashboardEnv({ ...base, DASHBOARD_RELAY_URL: 'wss://edge.example/relay/v1/ws' }).ok).toBe(true);
    expect(problems({ ...base, LOG_LEVEL: 'loud' })[0]?.variable).toBe('LOG_LEVEL');
  });

  it('takes a blank value as unset: the default, never 0, and a refusal where it is required', () => {
    expect(parseDashboardEnv({ ...base, DASHBOARD_PORT: '', DASHBOARD_HOST: ' ', DASHBOARD_PAGE_DIR: '', LOG_LEVEL: '' })).toMatchObject({
      ok: true,
      config: { port: 8084, host: '0.0.0.0', pageDir: undefined, logLevel: 'info' },
    });
    expect(problems({ ...base, DASHBOARD_RELAY_URL: '' })[0]?.message).toMatch(/^DASHBOARD_RELAY_URL="": is required/);
  });

  it('reports every problem at once', () => {
    expect(problems({ DASHBOARD_PORT: '70000', DASHBOARD_RELAY_URL: 'http://relay' }).map((p) => p.variable)).toEqual([
      'DASHBOARD_PORT',
      'DASHBOARD_AUTH_URL',
      'DASHBOARD_RELAY_URL',
    ]);
  });
});

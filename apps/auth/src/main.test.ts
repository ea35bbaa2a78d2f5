import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { INGEST_DEMAND_KEY } from '@streamgate/demand';
import { startRedisCluster, waitFor } from '@streamgate/testkit';

const entry = fileURLToPath(new URL('./main.ts', import.meta.url));
// tsx is a devDependency of the workspace root, so it is resolved from there.
const tsx = pathToFileURL(createRequire(new URL('../../../package.json', import.meta.url)).resolve('tsx')).href;

const env = {
  PATH: process.env.PATH ?? '',
  AUTH_HOST: '127.0.0.1',
  AUTH_PORT: '0',
  AUTH_DEV_GENERATE_KEYS: 'true',
  AUTH_ISSUER: 'auth-main-test',
  AUTH_AUDIENCE: 'relay',
  AUTH_REDIS_URL: 'redis://127.0.0.1:6390',
  NODE_ENV: 'test',
};

type Run = { child: ChildProcess; output: () => string; exited: Promise<number | null> };
const running: ChildProcess[] = [];

// Loaded with --import: makes the process hit a rejection (or exception) nobody handles on SIGUSR2.
const faultFixture = fileURLToPath(new URL('../../../packages/boot/src/__fixtures__/faultOnSignal.ts', import.meta.url));

function start(overrides: Record<string, string | undefined>, nodeArgs: readonly string[] = []): Run {
  const child = spawn(process.execPath, ['--conditions=streamgate-source', '--import', tsx, ...nodeArgs, entry], {
    env: { ...env, ...overrides },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

async function within<T>(promise: Promise<T>, ms: number, what: string, run: Run): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms; output:\n${run.output()}`)), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function listeningPort(run: Run): Promise<number> {
  return new Promise((resolve) => {
    const check = (): void => {
      for (const line of run.output().split('\n')) {
        if (!line.includes('"msg":"listening"')) continue;
        const record = JSON.parse(line) as { port?: unknown };
        if (typeof record.port === 'number') {
          run.child.stdout?.off('data', check);
          resolve(record.port);
          return;
        }
      }
    };
    run.child.stdout?.on('data', check);
    check();
  });
}

afterEach(() => {
  for (const child of running.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

describe('main', () => {
  it('logs "listening" with the actual port, serves, and exits 0 on SIGTERM', async () => {
    const run = start({});
    const port = await within(listeningPort(run), 20_000, 'no listening line', run);
    expect(port).toBeGreaterThan(0);
    const res = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(5000) });
    expect(res.status).toBe(200);
    // Without AUTH_DEMO_ROUTER=true there is no token procedure to ask.
    const input = encodeURIComponent(JSON.stringify({ stream: 'ticks', user: 'alice' }));
    const demo = await fetch(`http://127.0.0.1:${port}/trpc/demo.token?input=${input}`, { signal: AbortSignal.timeout(5000) });
    expect(demo.status).toBe(404);
    run.child.kill('SIGTERM');
    expect(await within(run.exited, 10_000, 'no exit after SIGTERM', run)).toBe(0);
  });

  it('names a Redis Cluster in tokens and registers ingest demand in it (AUTH_REDIS_URL=redis-cluster://…)', async () => {
    const cluster = await startRedisCluster({ primaries: 3, replicasPerPrimary: 0 });
    try {
      // Seeded with a primary that does not hold the demand set's slot: only a cluster client finds it.
      const holder = await cluster.primaryOf(INGEST_DEMAND_KEY);
      const seed = (await cluster.primaries()).find((node) => node.port !== holder.port);
      const url = `redis-cluster://127.0.0.1:${seed?.port ?? 0}`;
      const run = start({ AUTH_REDIS_URL: url, AUTH_DEMO_ROUTER: 'true', AUTH_DEMAND_PREFIXES: 'demo:' });
      const port = await within(listeningPort(run), 20_000, 'no listening line', run);
      const input = encodeURIComponent(JSON.stringify({ stream: 'on-cluster', user: 'alice' }));
      const res = await fetch(`http://127.0.0.1:${port}/trpc/demo.token?input=${input}`, { signal: AbortSignal.timeout(5000) });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { result: { data: { token: string } } };
      const claims = JSON.parse(Buffer.from(body.result.data.token.split('.')[1] ?? '', 'base64url').toString('utf8')) as { redis: string };
      expect(claims.redis).toBe(url);
      const client = cluster.cluster();
      await waitFor(async () => (await client.zscore(INGEST_DEMAND_KEY, 'demo:on-cluster')) !== null, {
        timeoutMs: 10_000,
        message: `auth never registered demand in the cluster; output:\n${run.output()}`,
      });
    } finally {
      await cluster.stop();
    }
  });

  it('exits 78 naming every bad variable at once when the configuration is wrong', async () => {
    const run = start({ AUTH_ISSUER: undefined, AUTH_PORT: 'abc', AUTH_TOKEN_TTL_SECONDS: '' });
    expect(await within(run.exited, 20_000, 'no exit on bad config', run)).toBe(78);
    expect(run.output()).toMatch(/"variables":\["AUTH_PORT","AUTH_ISSUER"\]/);
    expect(run.output()).toMatch(/AUTH_ISSUER \(unset\): is required/);
    expect(run.output()).toContain(
      'AUTH_PORT=\\"abc\\": must be an integer from 0 to 65535 (0 = any free port); set it to a port number or leave it unset for 8080',
    );
  });

  it('exits 78 naming AUTH_DEMO_ROUTER when the demo router is asked for in production', async () => {
    const run = start({ AUTH_DEV_GENERATE_KEYS: undefined, AUTH_SIGNING_KEYS: '[]', AUTH_DEMO_ROUTER: 'true', NODE_ENV: 'production' });
    expect(await within(run.exited, 20_000, 'no exit on the demo router in production', run)).toBe(78);
    expect(run.output()).toMatch(/"variables":\["AUTH_DEMO_ROUTER"\]/);
    expect(run.output()).toContain('AUTH_DEMO_ROUTER=\\"true\\": is refused with NODE_ENV=production');
  });

  it('exits 78 naming the variable when the signing keys are bad', async () => {
    const run = start({ AUTH_DEV_GENERATE_KEYS: undefined, AUTH_SIGNING_KEYS: '[{"kty":"EC"}]' });
    expect(await within(run.exited, 20_000, 'no exit on bad keys', run)).toBe(78);
    expect(run.output()).toMatch(/AUTH_SIGNING_KEYS: key\[0\]/);
  });

  it.each([
    ['reject', 'unhandledRejection', 'fixture: rejection nobody handles'],
    ['throw', 'uncaughtException', 'fixture: exception nobody catches'],
  ])('on a fault (%s) logs it with its kind and exits 70', async (fault, kind, message) => {
    const run = start({ STREAMGATE_FIXTURE_FAULT: fault }, ['--import', faultFixture]);
    await within(listeningPort(run), 20_000, 'no listening line', run);
    run.child.kill('SIGUSR2');
    expect(await within(run.exited, 10_000, 'no exit after the fault', run)).toBe(70);
    const fatal =
      run
        .output()
        .split('\n')
        .find((line) => line.includes('"level":60')) ?? '';
    expect(fatal).toContain(`"kind":"${kind}"`);
    expect(fatal).toContain(message);
    expect(fatal).toContain('"exitCode":70');
  });
});

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, describe, expect, it } from 'vitest';
import { appNodeVersion, repoRoot, spawnTsEntry, startRedis, withDeadline } from '@streamgate/testkit';

const ENTRY = 'apps/relay/src/main.ts';
const FAULT_FIXTURE = join(repoRoot(), 'packages/boot/src/__fixtures__/faultOnSignal.ts');
const dir = mkdtempSync(join(tmpdir(), 'relay-main-'));
const jwksFile = join(dir, 'jwks.json');
writeFileSync(jwksFile, JSON.stringify({ keys: [] }));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const env = (redisUrl: string): Record<string, string> => ({
  RELAY_HOST: '127.0.0.1',
  RELAY_PORT: '0',
  RELAY_JWKS_FILE: jwksFile,
  RELAY_TOKEN_AUDIENCE: 'relay',
  RELAY_TOKEN_ISSUER: 'auth',
  RELAY_REDIS_ALLOWLIST: redisUrl,
  RELAY_DRAIN_FAST_WINDOW_MS: '300',
  LOG_LEVEL: 'info',
});

describe('relay main', () => {
  it('exits 78 with every configuration problem in one log record, blank values included', async () => {
    await using service = await spawnTsEntry(ENTRY, {
      name: 'relay-bad-config',
      env: { ...env('redis://127.0.0.1:9'), RELAY_PORT: 'abc', RELAY_TOKEN_ISSUER: '', RELAY_CLOCK_SKEW_SECONDS: '301' },
    });
    const status = await withDeadline(service.exited, 20_000, 'relay exit on a bad configuration');
    expect(status.code).toBe(78);
    const output = service.output();
    expect(output).toContain('invalid relay configuration (3 problems)');
    expect(output).toContain(
      'RELAY_PORT=\\"abc\\": must be an integer from 0 to 65535 (0 = any free port); set it to a port number or leave it unset for 8081',
    );
    expect(output).toContain('RELAY_TOKEN_ISSUER=\\"\\": is required');
    expect(output).toContain('RELAY_CLOCK_SKEW_SECONDS=\\"301\\"');
    expect(output).not.toMatch(/"msg":"listening"/);
  });

  it('exits 78 naming RELAY_JWKS_FILE when the key file is missing or holds a private key', async () => {
    const privateKeyFile = join(dir, 'private.json');
    writeFileSync(privateKeyFile, JSON.stringify({ keys: [{ kty: 'OKP', crv: 'Ed25519', x: 'AAAA', d: 'AAAA', kid: 'k' }] }));
    for (const [name, file, says] of [
      ['relay-missing-jwks', join(dir, 'absent.json'), 'cannot be read'],
      ['relay-private-jwks', privateKeyFile, 'keys.0.d'],
    ] as const) {
      await using service = await spawnTsEntry(ENTRY, { name, env: { ...env('redis://127.0.0.1:9'), RELAY_JWKS_FILE: file } });
      const status = await withDeadline(service.exited, 20_000, `${name}: relay exit on a bad key file`);
      expect(status.code).toBe(78);
      expect(service.output()).toContain('invalid relay configuration (1 problem)');
      expect(service.output()).toContain(says);
    }
  });

  it('listens on the default port, not a random one, when RELAY_PORT is blank', async () => {
    // Another process on 8081 is possible on a shared machine: either way the relay must not
    // have picked a free port of its own.
    await using redis = await startRedis();
    await using service = await spawnTsEntry(ENTRY, {
      name: 'relay-blank-port',
      env: { ...env(redis.url), RELAY_PORT: '' },
      relayUserland: true,
    });
    const line = await service.waitForLine(/"msg":"listening"|relay failed to start/, 30_000);
    if (line.includes('"msg":"listening"')) expect((JSON.parse(line) as { port: number }).port).toBe(8081);
    else expect(line).toMatch(/8081/);
  });

  it('says in its listening line which native uWS binary serves it: the one for the Node it runs on', async () => {
    await using redis = await startRedis();
    await using service = await spawnTsEntry(ENTRY, {
      name: 'relay-binary',
      env: env(redis.url),
      relayUserland: true,
      readyPattern: /"msg":"listening"/,
      readyTimeoutMs: 30_000,
    });
    const line = JSON.parse(await service.waitForLine(/"msg":"listening"/)) as { nodeVersion: string; uws: string };
    const abi = /^v(\d+)\./.exec(line.nodeVersion)?.[1];
    const expectedAbi = { '20': '115', '22': '127', '24': '137', '25': '141' }[abi ?? ''];
    expect(expectedAbi, `relay ran on ${line.nodeVersion}`).toBeDefined();
    expect(line.uws).toBe(`uws_${process.platform}_${process.arch}_${expectedAbi ?? ''}.node`);
    // The apps run on the Node the testkit was told to use (STREAMGATE_APP_NODE), else this one.
    expect(line.nodeVersion).toBe(appNodeVersion());
  });

  it('refuses to start where uWS cannot load its native binary, naming the platform matrix', async () => {
    await using redis = await startRedis();
    // --no-addons makes every native addon fail to load, as a missing or incompatible binary does.
    await using service = await spawnTsEntry(ENTRY, { name: 'relay-no-binary', env: env(redis.url), nodeArgs: ['--no-addons'] });
    const status = await withDeadline(service.exited, 20_000, 'relay exit without its native binary');
    expect(status.code).toBe(1);
    const output = service.output();
    expect(output).toContain('relay failed to start');
    expect(output).toContain('uws_unavailable');
    expect(output).toMatch(/uWebSockets.js could not load a native binary uws_\w+_\w+_\d+\.node for Node v/);
    expect(output).toContain('runs natively on Node 20 (ABI 115), 22 (ABI 127), 24 (ABI 137) or 25 (ABI 141)');
    expect(output).toContain('glibc >= 2.38');
    expect(output).not.toMatch(/"msg":"listening"/);
  });

  it('on an unhandled rejection logs it, drains its sockets over the fast window and exits 70', async () => {
    await using redis = await startRedis();
    await using service = await spawnTsEntry(ENTRY, {
      name: 'relay-fault',
      relayUserland: true,
      // A fast window long enough to scrape /metrics while the fault drain runs.
      env: { ...env(redis.url), RELAY_DRAIN_FAST_WINDOW_MS: '1500' },
      nodeArgs: ['--import', FAULT_FIXTURE],
      readyPattern: /"msg":"listening"/,
      readyTimeoutMs: 30_000,
    });
    const port = (JSON.parse(await service.waitForLine(/"msg":"listening"/)) as { port: number }).port;
    // Several sockets: the relay exits once the last is drained, at the latest of their uniform
    // draws over the fast window. With one, an early draw ended the process before /metrics was read.
    const sockets = Array.from({ length: 8 }, () => new WebSocket(`ws://127.0.0.1:${port}/v1/ws`));
    const frames: string[] = [];
    for (const socket of sockets) socket.on('message', (data: Buffer) => frames.push(data.toString('utf8')));
    const closed = Promise.all(sockets.map((socket) => new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)))));
    await withDeadline(
      Promise.all(sockets.map((socket) => new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject)))),
      10_000,
      'sockets open',
    );

    const startedAt = Date.now();
    service.signal('SIGUSR2');
    const fatal = await service.waitForLine(/"level":60/, 10_000);
    expect(fatal).toContain('"kind":"unhandledRejection"');
    expect(fatal).toContain('fixture: rejection nobody handles');
    expect(fatal).toContain('"exitCode":70');
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(2_000) })).text();
    expect(metrics).toMatch(/^streamgate_relay_faults_total\{kind="unhandledRejection"\} 1$/m);
    expect(await withDeadline(closed, 10_000, 'sockets closed by the fault drain')).toEqual(sockets.map(() => 4000));
    expect(frames.filter((f) => f.includes('"op":"reconnect"'))).toHaveLength(sockets.length);
    const status = await withDeadline(service.exited, 10_000, 'relay exit after the fault');
    expect(status.code).toBe(70);
    // Bounded: the fast window (1.5 s here) plus the close margin, not the 15-minute deploy drain.
    expect(Date.now() - startedAt).toBeLessThan(6_000);
  });

  it('on an uncaught exception exits 70 too', async () => {
    await using redis = await startRedis();
    await using service = await spawnTsEntry(ENTRY, {
      name: 'relay-throw',
      relayUserland: true,
      env: { ...env(redis.url), STREAMGATE_FIXTURE_FAULT: 'throw' },
      nodeArgs: ['--import', FAULT_FIXTURE],
      readyPattern: /"msg":"listening"/,
      readyTimeoutMs: 30_000,
    });
    service.signal('SIGUSR2');
    const fatal = await service.waitForLine(/"level":60/, 10_000);
    expect(fatal).toContain('"kind":"uncaughtException"');
    expect(fatal).toContain('fixture: exception nobody catches');
    expect((await withDeadline(service.exited, 10_000, 'relay exit after the fault')).code).toBe(70);
  });
});

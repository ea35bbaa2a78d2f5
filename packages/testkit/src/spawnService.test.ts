import { describe, expect, it } from 'vitest';
import { readListeningPort } from './readListeningPort.js';
import { ServiceError, spawnService } from './spawnService.js';
import { spawnTsEntry } from './spawnTsEntry.js';
import { waitFor } from './waitFor.js';
import { isProcessGone } from './isProcessGone.js';

const node = (script: string) => ({ command: process.execPath, args: ['-e', script] });

describe('spawnService', () => {
  it('surfaces the output of a process that dies before it is ready', async () => {
    const error: unknown = await spawnService({
      name: 'dies',
      ...node('console.log("booting"); console.error("fatal: config missing"); process.exit(3)'),
      readyPattern: /"msg":"listening"/,
      readyTimeoutMs: 5_000,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceError);
    const message = (error as Error).message;
    expect(message).toContain('dies: exited with code 3 before it was ready');
    expect(message).toContain('booting');
    expect(message).toContain('[stderr] fatal: config missing');
  });

  it('reports a command that does not exist', async () => {
    await expect(spawnService({ name: 'ghost', command: 'streamgate-no-such-binary' })).rejects.toThrow(
      /ghost: could not be started: .*ENOENT/,
    );
  });

  it('kills a process that is not ready in time, and says so', async () => {
    const error: unknown = await spawnService({
      name: 'slow',
      ...node('console.log("still thinking"); setInterval(() => {}, 1000)'),
      readyPattern: /ready/,
      // Long enough for a loaded machine to start node and print the line the test looks for.
      readyTimeoutMs: 3_000,
    }).catch((e: unknown) => e);
    expect((error as Error).message).toMatch(/slow: not ready .*3000 ms[\s\S]*still thinking/);
  });

  it('resolves on the ready line, waits for later lines and stops with SIGTERM', async () => {
    await using service = await spawnService({
      name: 'ticker',
      ...node(`
        console.log(JSON.stringify({ msg: 'listening', port: 4321 }));
        let n = 0;
        const timer = setInterval(() => console.log('tick ' + ++n), 10);
        process.on('SIGTERM', () => { clearInterval(timer); console.log('bye'); process.exit(0); });
      `),
      readyPattern: /"msg":"listening"/,
      readyTimeoutMs: 5_000,
    });
    expect(await readListeningPort(service)).toBe(4321);
    await expect(service.waitForLine(/tick 3/, 5_000)).resolves.toBe('tick 3');
    const cursor = service.lineCount;
    await service.waitForLine(/tick/, 5_000, { fromLine: cursor });
    expect(service.lineCount).toBeGreaterThan(cursor);
    const status = await service.stop();
    expect(status).toEqual({ code: 0, signal: null });
    expect(service.lines).toContain('bye');
    expect(isProcessGone(service.pid)).toBe(true);
  });

  it('escalates to SIGKILL when SIGTERM is ignored', async () => {
    const service = await spawnService({
      name: 'stubborn',
      ...node('process.on("SIGTERM", () => console.log("ignoring")); console.log("up"); setInterval(() => {}, 1000)'),
      readyPattern: /^up$/,
    });
    const status = await service.stop(300);
    expect(status.signal).toBe('SIGKILL');
    await expect(service.waitForLine(/never/, 1_000)).rejects.toThrow(/exited on signal SIGKILL/);
  });

  it('keeps only the last 200 lines', async () => {
    const service = await spawnService({
      name: 'chatty',
      ...node('for (let i = 0; i < 500; i++) console.log("line " + i)'),
    });
    await service.exited;
    expect(service.lineCount).toBe(500);
    expect(service.lines).toHaveLength(200);
    expect(service.lines[0]).toBe('line 300');
    expect(service.output()).toContain('last 200 of 500 lines');
  });
});

describe('parent death', () => {
  it('takes the child down when the process that spawned it is killed', async () => {
    // A middle process spawns a long sleeper through spawnService and prints its pid; killing
    // the middle one with SIGKILL (no exit handlers run) must not leave the sleeper behind.
    await using middle = await spawnTsEntry('src/__fixtures__/spawnsSleeper.ts', {
      cwd: new URL('..', import.meta.url).pathname,
      readyPattern: /^sleeper \d+$/,
    });
    const line = await middle.waitForLine(/^sleeper \d+$/);
    const sleeperPid = Number(line.split(' ')[1]);
    expect(isProcessGone(sleeperPid)).toBe(false);
    middle.signal('SIGKILL');
    await middle.exited;
    await waitFor(() => isProcessGone(sleeperPid), { timeoutMs: 5_000, message: 'sleeper killed with its parent' });
  });
  it('feeds stdin when asked to, and refuses to write once the process is gone', async () => {
    const echo =
      'require("node:readline").createInterface({ input: process.stdin }).on("line", (l) => console.log(`got ${l}`)).on("close", () => process.exit(0)); console.log("ready")';
    await using service = await spawnService({ name: 'echo', ...node(echo), readyPattern: /^ready$/, stdin: true });
    expect(service.write('one\n')).toBe(true);
    await service.waitForLine(/^got one$/);
    await service.stop();
    expect(service.write('two\n')).toBe(false);
    await using silent = await spawnService({
      name: 'no-stdin',
      ...node('console.log("ready"); setInterval(() => {}, 1000)'),
      readyPattern: /^ready$/,
    });
    expect(silent.write('ignored\n')).toBe(false);
  });
});

describe('spawnTsEntry', () => {
  it('runs a TypeScript entry point and reads its port from the JSON log', async () => {
    await using service = await spawnTsEntry('src/__fixtures__/listeningServer.ts', {
      cwd: new URL('..', import.meta.url).pathname,
      args: ['hello'],
      readyPattern: /"msg":"listening"/,
    });
    const port = await readListeningPort(service, { where: { name: 'hello' } });
    const body = await fetch(`http://127.0.0.1:${port}/`).then((res) => res.text());
    expect(body).toBe('hello');
    await service.stop();
    expect(service.lines.some((line) => line.includes('"msg":"stopping"'))).toBe(true);
  });
});

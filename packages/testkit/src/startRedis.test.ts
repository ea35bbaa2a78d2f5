import { describe, expect, it } from 'vitest';
import { redisPing } from './redisPing.js';
import { startRedis } from './startRedis.js';
import { waitFor } from './waitFor.js';
import { isProcessGone } from './isProcessGone.js';

describe('startRedis', () => {
  it('starts a private server and stops it', async () => {
    const redis = await startRedis();
    const pid = redis.service?.pid;
    expect(pid).toBeTypeOf('number');
    expect(redis.port).not.toBe(6379);
    expect(redis.url).toBe(`redis://127.0.0.1:${redis.port}/0`);
    const client = redis.client();
    expect(await client.ping()).toBe('PONG');
    await client.xadd('s', '*', 'data', '{"n":1}');
    expect(await client.xlen('s')).toBe(1);
    await redis.stop();
    expect(isProcessGone(pid ?? -1)).toBe(true);
    expect(await redisPing(redis.port)).toBe(false);
    expect(client.status).toBe('end');
  });

  it('restarts on the same port with fresh data, after a kill', async () => {
    await using redis = await startRedis();
    const client = redis.client({ maxRetriesPerRequest: null });
    await client.set('k', 'v');
    const status = await redis.kill();
    expect(status?.signal).toBe('SIGKILL');
    expect(await redisPing(redis.port)).toBe(false);
    await redis.restart();
    expect(await redisPing(redis.port)).toBe(true);
    // The same ioredis connection reconnects to the new server by itself.
    await waitFor(async () => (await client.get('k')) === null, { timeoutMs: 5_000, message: 'client reconnected' });
  });

  it('keeps its directory across a restart, so a server started with an AOF comes back with its data', async () => {
    await using redis = await startRedis({ args: ['--appendonly', 'yes', '--appendfsync', 'always'] });
    const client = redis.client({ maxRetriesPerRequest: null });
    // Refused reconnects while the server is down are expected; collected, not left unhandled.
    const connectionErrors: Error[] = [];
    client.on('error', (error: Error) => connectionErrors.push(error));
    await client.xadd('s', '*', 'data', '{"n":1}');
    await redis.kill();
    await redis.restart();
    await waitFor(async () => (await client.xlen('s')) === 1, { timeoutMs: 5_000, message: 'entry survived the kill' });
    expect(connectionErrors.every((e) => /ECONNREFUSED|ECONNRESET/.test(e.message))).toBe(true);
  });

  it('runs two servers side by side', async () => {
    await using a = await startRedis();
    await using b = await startRedis();
    expect(a.port).not.toBe(b.port);
    await a.client().set('only', 'a');
    expect(await b.client().get('only')).toBeNull();
  });

  it('explains how to install a missing binary', async () => {
    await expect(startRedis({ binary: 'streamgate-no-redis-server' })).rejects.toThrow(/apt-get install redis-server/);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { useFleet } from './support/startFleet.js';
import { audience, everyoneHasAll, readMode, writeAll } from './support/notifyAudience.js';

// The slow sweep is out of reach: an entry whose notification was lost (a killed pub/sub
// connection, notifications turned off) must come by the reconnect's read or the read-mode
// switch, within BOUND_MS. A blocking read would answer within its block, so that is long here:
// an entry that only a notification or those reads can bring shows as such.
const SWEEP_MS = 600_000;
const BOUND_MS = 5_000;
const getFleet = useFleet({
  relays: 1,
  redisArgs: ['--notify-keyspace-events', 'Kt'],
  relayEnv: { RELAY_READ_MODE_CHECK_MS: '300', RELAY_NOTIFY_SWEEP_MS: String(SWEEP_MS), RELAY_XREAD_BLOCK_MS: '30000' },
});

const STREAMS = 4;
const CLIENTS = 5;

let cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  cleanup = [];
});

describe('notification-driven live reads (redis-server with notify-keyspace-events Kt)', () => {
  it('delivers every entry in order, once, through CLIENT KILLs of the pub/sub connection', async () => {
    const fleet = getFleet();
    await waitFor(async () => (await readMode(fleet)) === 'notify', { timeoutMs: 10_000, message: 'relay never reported notify mode' });
    const { streams, recorders } = await audience(fleet, 'kill', { streams: STREAMS, clients: CLIENTS }, cleanup);
    const admin = fleet.redis.client();
    const notifyConnection = async (): Promise<string | undefined> => {
      const list = String(await admin.call('CLIENT', 'LIST'));
      return /id=(\d+) .*name=streamgate-relay:relay-0:notify\b/.exec(list)?.[1];
    };
    const killed: string[] = [];
    await writeAll(fleet, streams, 200, async (window) => {
      if (window % 3 !== 1) return;
      // Each kill hits a connection the relay opened again after the previous one.
      let id: string | undefined;
      await waitFor(async () => (id = await notifyConnection()) !== undefined && !killed.includes(id), {
        timeoutMs: 10_000,
        message: 'the pub/sub connection never came back',
      });
      await admin.call('CLIENT', 'KILL', 'ID', id ?? '');
      killed.push(id ?? '');
    });
    const lastWrite = Date.now();
    const tail = await everyoneHasAll(recorders, 200, lastWrite, BOUND_MS);
    expect(killed.length).toBe(3);
    // The reader came back on a new connection, and still reads by notification.
    await waitFor(async () => (await notifyConnection()) !== undefined && !killed.includes((await notifyConnection()) ?? ''), {
      timeoutMs: 10_000,
      message: 'the pub/sub connection never came back',
    });
    expect(await readMode(fleet)).toBe('notify');
    expect(tail).toBeLessThan(BOUND_MS);
  });

  it('delivers every entry in order, once, while notifications are turned off and on at runtime, and reports the mode', async () => {
    const fleet = getFleet();
    await waitFor(async () => (await readMode(fleet)) === 'notify', { timeoutMs: 10_000, message: 'relay never reported notify mode' });
    const { streams, recorders } = await audience(fleet, 'toggle', { streams: STREAMS, clients: CLIENTS }, cleanup);
    const admin = fleet.redis.client();
    cleanup.push(() => admin.config('SET', 'notify-keyspace-events', 'Kt'));
    const seen: string[] = [];
    await writeAll(fleet, streams, 300, async (window) => {
      if (window === 3) await admin.config('SET', 'notify-keyspace-events', '');
      if (window === 4) {
        await waitFor(async () => (await readMode(fleet)) === 'batch', { timeoutMs: 5_000, message: 'relay never reported batch mode' });
        seen.push('batch');
      }
      if (window === 9) await admin.config('SET', 'notify-keyspace-events', 'Kt');
      if (window === 10) {
        await waitFor(async () => (await readMode(fleet)) === 'notify', { timeoutMs: 5_000, message: 'relay never went back to notify' });
        seen.push('notify');
      }
    });
    await everyoneHasAll(recorders, 300, Date.now(), BOUND_MS);
    expect(seen).toEqual(['batch', 'notify']);
  });
});

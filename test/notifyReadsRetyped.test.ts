import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '@streamgate/testkit';
import { useFleet } from './support/startFleet.js';
import { audience, everyoneHasAll, readMode, writeAll } from './support/notifyAudience.js';
import { publishSequence } from './support/publishSequence.js';

// A key turned into another type with no stream event (`Kt` sends neither DEL nor HSET) is found
// only by the sweep: here it runs every second.
const SWEEP_MS = 1_000;
const BOUND_MS = SWEEP_MS + 4_000;
const getFleet = useFleet({
  relays: 1,
  redisArgs: ['--notify-keyspace-events', 'Kt'],
  relayEnv: { RELAY_NOTIFY_SWEEP_MS: String(SWEEP_MS), RELAY_XREAD_BLOCK_MS: '30000' },
});

const STREAMS = 4;
const CLIENTS = 5;

let cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  cleanup = [];
});

describe('notification-driven live reads, a watched key retyped (redis-server with notify-keyspace-events Kt)', () => {
  it('keeps the other streams flowing when a watched key turns into another type, and tells its subscribers', async () => {
    const fleet = getFleet();
    await waitFor(async () => (await readMode(fleet)) === 'notify', { timeoutMs: 10_000, message: 'relay never reported notify mode' });
    const { streams, recorders } = await audience(fleet, 'retyped', { streams: STREAMS, clients: CLIENTS }, cleanup);
    const [victim, ...rest] = streams as [string, ...string[]];
    const admin = fleet.redis.client();
    await writeAll(fleet, streams, 20, () => Promise.resolve());
    await everyoneHasAll(recorders, 20, Date.now(), BOUND_MS);
    // The demo streams' keys are `demo:<name>`. DEL and HSET are not stream events (`Kt` sends
    // neither): the sweep finds the key, and a read naming it with the others fails whole.
    await admin.multi().del(`demo:${victim}`).hset(`demo:${victim}`, 'field', 'value').exec();
    await Promise.all(rest.map((s) => publishSequence(admin, s, 20, 40, 20)));
    const victims = recorders.filter((r) => r.stream === victim);
    await everyoneHasAll(
      recorders.filter((r) => r.stream !== victim),
      40,
      Date.now(),
      BOUND_MS,
    );
    await waitFor(() => victims.every((r) => r.errors.length > 0), {
      timeoutMs: BOUND_MS,
      message: "the retyped stream's subscribers were never told",
    });
    for (const r of victims) expect(r.errors[0]?.code).toBe('stream_unavailable');
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RelayClient } from '@streamgate/client';
import { waitFor } from '@streamgate/testkit';
import { metricValue, useFleet } from './support/startFleet.js';
import type { Fleet } from './support/startFleet.js';
import { gapsAndDuplicates, record } from './support/recorder.js';
import type { Recorder } from './support/recorder.js';
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

async function readMode(fleet: Fleet): Promise<string | undefined> {
  const text = await fleet.relays[0]!.metrics();
  if (metricValue(text, 'streamgate_relay_read_mode', 'mode="notify"') === 1) return 'notify';
  if (metricValue(text, 'streamgate_relay_read_mode', 'mode="batch"') === 1) return 'batch';
  return undefined;
}

/** Every client reads every stream: STREAMS × CLIENTS live subscriptions. */
async function audience(fleet: Fleet, name: string): Promise<{ streams: string[]; recorders: Array<Recorder & { stream: string }> }> {
  const relay = fleet.relays[0]!;
  const streams = Array.from({ length: STREAMS }, (_, i) => `${name}-${i}`);
  const recorders: Array<Recorder & { stream: string }> = [];
  for (let c = 0; c < CLIENTS; c++) {
    const client = new RelayClient({ urls: [relay.url], WebSocket, backoff: { baseMs: 50, maxMs: 1_000 } });
    cleanup.push(() => client.close());
    for (const stream of streams) recorders.push({ ...record(fleet, [relay.url], stream, { client }), stream });
  }
  await waitFor(() => recorders.every((r) => r.sub.state === 'live'), { timeoutMs: 20_000, message: 'not every subscription went live' });
  return { streams, recorders };
}

/** Writes seq 0…total-1 on every stream in windows of 20, calling `during` between windows. */
async function writeAll(fleet: Fleet, streams: readonly string[], total: number, during: (window: number) => Promise<void>): Promise<void> {
  const redis = fleet.redis.client();
  for (let from = 0; from < total; from += 20) {
    await Promise.all(streams.map((s) => publishSequence(redis, s, from, from + 20, 20)));
    await during(from / 20);
  }
}

async function everyoneHasAll(recorders: ReadonlyArray<Recorder & { stream: string }>, total: number, since: number): Promise<number> {
  await waitFor(() => recorders.every((r) => r.seqs.length >= total), {
    timeoutMs: BOUND_MS,
    message: `entries missing beyond the bound (${recorders.filter((r) => r.seqs.length >= total).length}/${recorders.length} complete)`,
  });
  for (const r of recorders) expect(gapsAndDuplicates(r.seqs, 0, total), r.stream).toBeNull();
  return Date.now() - since;
}

describe('notification-driven live reads, a watched key retyped (redis-server with notify-keyspace-events Kt)', () => {
  it('keeps the other streams flowing when a watched key turns into another type, and tells its subscribers', async () => {
    const fleet = getFleet();
    await waitFor(async () => (await readMode(fleet)) === 'notify', { timeoutMs: 10_000, message: 'relay never reported notify mode' });
    const { streams, recorders } = await audience(fleet, 'retyped');
    const [victim, ...rest] = streams as [string, ...string[]];
    const admin = fleet.redis.client();
    await writeAll(fleet, streams, 20, () => Promise.resolve());
    await everyoneHasAll(recorders, 20, Date.now());
    // The demo streams' keys are `demo:<name>`. DEL and HSET are not stream events (`Kt` sends
    // neither): the sweep finds the key, and a read naming it with the others fails whole.
    await admin.multi().del(`demo:${victim}`).hset(`demo:${victim}`, 'field', 'value').exec();
    await Promise.all(rest.map((s) => publishSequence(admin, s, 20, 40, 20)));
    const victims = recorders.filter((r) => r.stream === victim);
    await everyoneHasAll(
      recorders.filter((r) => r.stream !== victim),
      40,
      Date.now(),
    );
    await waitFor(() => victims.every((r) => r.errors.length > 0), {
      timeoutMs: BOUND_MS,
      message: "the retyped stream's subscribers were never told",
    });
    for (const r of victims) expect(r.errors[0]?.code).toBe('stream_unavailable');
  });
});

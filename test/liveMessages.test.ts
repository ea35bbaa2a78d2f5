import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RelayClient } from '@streamgate/client';
import { waitFor } from '@streamgate/testkit';
import { createPublisher } from '@streamgate/server';
import { demoStream } from '@streamgate/auth';
import { metricValue, useFleet } from './support/startFleet.js';
import type { Fleet } from './support/startFleet.js';
import { gapsAndDuplicates, record } from './support/recorder.js';
import type { Recorder } from './support/recorder.js';

// The sweep is far away: whatever arrives within a second came by a live message or a
// keyspace notification, not by the sweep. No lingering: a test's streams stop being read once
// its clients close, so the next test's count of watched streams is its own (with the default
// 5 s the last test's streams were still counted now and then, under a loaded machine).
const SWEEP_MS = 60_000;
const getFleet = useFleet({
  relays: 1,
  redisArgs: ['--notify-keyspace-events', 'Kt'],
  relayEnv: { RELAY_NOTIFY_SWEEP_MS: String(SWEEP_MS), RELAY_READ_MODE: 'notify', RELAY_STREAM_LINGER_MS: '0' },
});

const CLIENTS = 3;

let cleanup: Array<() => unknown> = [];
afterEach(async () => {
  for (const fn of cleanup.reverse()) await fn();
  cleanup = [];
});

async function audience(fleet: Fleet, streams: readonly string[]): Promise<Array<Recorder & { stream: string }>> {
  const relay = fleet.relays[0]!;
  const recorders: Array<Recorder & { stream: string }> = [];
  for (let c = 0; c < CLIENTS; c++) {
    const client = new RelayClient({ urls: [relay.url], WebSocket, backoff: { baseMs: 50, maxMs: 1_000 } });
    cleanup.push(() => client.close());
    for (const stream of streams) recorders.push({ ...record(fleet, [relay.url], stream, { client }), stream });
  }
  await waitFor(() => recorders.every((r) => r.sub.state === 'live'), { timeoutMs: 20_000, message: 'not every subscription went live' });
  // Every key's channels are confirmed, and its first read done, before the writes start.
  await waitFor(async () => metricValue(await relay.metrics(), 'streamgate_relay_streams') === streams.length, {
    timeoutMs: 5_000,
    message: 'the relay never watched every stream',
  });
  return recorders;
}

async function commandCalls(fleet: Fleet): Promise<Map<string, number>> {
  const text = String(await fleet.redis.client().info('commandstats'));
  const calls = new Map<string, number>();
  for (const match of text.matchAll(/^cmdstat_([a-z|]+):calls=(\d+)/gm)) calls.set(match[1] ?? '', Number(match[2]));
  return calls;
}

const event = (seq: number) => JSON.stringify({ seq, text: `event ${seq}`, at: new Date().toISOString() });

async function everyoneHasAll(recorders: ReadonlyArray<Recorder & { stream: string }>, total: number, timeoutMs: number): Promise<void> {
  await waitFor(() => recorders.every((r) => r.seqs.length >= total), {
    timeoutMs,
    message: () => `entries missing (${recorders.filter((r) => r.seqs.length >= total).length}/${recorders.length} complete)`,
  });
  for (const r of recorders) expect(gapsAndDuplicates(r.seqs, 0, total), r.stream).toBeNull();
}

describe('live messages: the entry travels with its write (redis-server, notify-keyspace-events Kt)', () => {
  it('delivers our writes with no XREAD: only the recreation check reads, at its own pace', async () => {
    const fleet = getFleet();
    const streams = Array.from({ length: 10 }, (_, i) => `fast-${i}`);
    const recorders = await audience(fleet, streams);
    const publisher = createPublisher({ redis: fleet.redis.client() });
    const before = await commandCalls(fleet);
    const started = Date.now();
    const TOTAL = 100;
    for (let seq = 0; seq < TOTAL; seq++) {
      const results = await Promise.all(streams.map((s) => publisher.publish(demoStream.for(s), JSON.parse(event(seq)))));
      for (const r of results) if (!r.ok) throw new Error(r.error.message);
    }
    await everyoneHasAll(recorders, TOTAL, 5_000);
    const after = await commandCalls(fleet);
    const delta = (name: string): number => (after.get(name) ?? 0) - (before.get(name) ?? 0);
    const seconds = (Date.now() - started) / 1_000;
    // Every entry was published by the write script (several entries of a tick share one call).
    expect(delta('publish')).toBeGreaterThanOrEqual(TOTAL * streams.length);
    expect(delta('evalsha') + delta('eval')).toBeGreaterThan(0);
    expect(delta('xread')).toBe(0);
    // The recreation check looks at each watched key once a second (an XRANGE and an XINFO):
    // a cost per stream and second, never per entry (1,000 entries were written).
    const perCheck = streams.length * (Math.ceil(seconds) + 2);
    expect(delta('xrange')).toBeLessThanOrEqual(perCheck);
    expect(delta('xinfo|stream') + delta('xinfo')).toBeLessThanOrEqual(perCheck);
  });

  it('delivers every entry once, in order, when a foreign XADD lands between two of our writes', async () => {
    const fleet = getFleet();
    const streams = ['mixed-0', 'mixed-1'];
    const recorders = await audience(fleet, streams);
    const admin = fleet.redis.client();
    const publisher = createPublisher({ redis: fleet.redis.client() });
    const TOTAL = 200;
    for (let seq = 0; seq < TOTAL; seq++) {
      await Promise.all(
        streams.map(async (s) => {
          const ref = demoStream.for(s);
          // Every third entry is a foreign producer's plain XADD, between two of the publisher's scripts.
          if (seq % 3 === 1) await admin.xadd(ref.name, '*', 'data', event(seq));
          else {
            const r = await publisher.publish(ref, JSON.parse(event(seq)));
            if (!r.ok) throw new Error(r.error.message);
          }
        }),
      );
    }
    await everyoneHasAll(recorders, TOTAL, 5_000);
  });

  it("delivers a foreign producer's entries (plain XADD only) within a second, by its keyspace notification", async () => {
    const fleet = getFleet();
    const streams = ['foreign-0', 'foreign-1', 'foreign-2'];
    const recorders = await audience(fleet, streams);
    const admin = fleet.redis.client();
    const TOTAL = 30;
    let worst = 0;
    for (let seq = 0; seq < TOTAL; seq++) {
      const at = Date.now();
      await Promise.all(streams.map((s) => admin.xadd(demoStream.for(s).name, '*', 'data', event(seq))));
      await waitFor(() => recorders.every((r) => r.seqs.length > seq), {
        timeoutMs: 1_000,
        message: `foreign entry ${seq} not delivered within 1 s (the documented bound with notifications on)`,
      });
      worst = Math.max(worst, Date.now() - at);
    }
    await everyoneHasAll(recorders, TOTAL, 1_000);
    expect(worst).toBeLessThan(1_000);
  });

  it('delivers every entry once, in order, through CLIENT KILLs of the pub/sub connection while our writes and a foreign one go on', async () => {
    const fleet = getFleet();
    const streams = ['killed-0', 'killed-1', 'killed-2'];
    const recorders = await audience(fleet, streams);
    const admin = fleet.redis.client();
    const publisher = createPublisher({ redis: fleet.redis.client() });
    const notifyConnection = async (): Promise<string | undefined> => {
      const list = String(await admin.call('CLIENT', 'LIST'));
      return /id=(\d+) .*name=streamgate-relay:relay-0:notify\b/.exec(list)?.[1];
    };
    const killed: string[] = [];
    const TOTAL = 300;
    for (let seq = 0; seq < TOTAL; seq++) {
      await Promise.all(
        streams.map(async (s) => {
          const ref = demoStream.for(s);
          if (s === 'killed-2' && seq % 5 === 0) await admin.xadd(ref.name, '*', 'data', event(seq));
          else {
            const r = await publisher.publish(ref, JSON.parse(event(seq)));
            if (!r.ok) throw new Error(r.error.message);
          }
        }),
      );
      if (seq % 100 === 50) {
        let id: string | undefined;
        await waitFor(async () => (id = await notifyConnection()) !== undefined && !killed.includes(id), {
          timeoutMs: 10_000,
          message: 'the pub/sub connection never came back',
        });
        await admin.call('CLIENT', 'KILL', 'ID', id ?? '');
        killed.push(id ?? '');
      }
    }
    // Entries written while the channels were gone are read once they are confirmed again, well before the sweep.
    await everyoneHasAll(recorders, TOTAL, 10_000);
    expect(killed.length).toBe(3);
  });
});

import { expect } from 'vitest';
import WebSocket from 'ws';
import { RelayClient } from '@streamgate/client';
import { waitFor } from '@streamgate/testkit';
import { metricValue } from './startFleet.js';
import type { Fleet } from './startFleet.js';
import { gapsAndDuplicates, record } from './recorder.js';
import type { Recorder } from './recorder.js';
import { publishSequence } from './publishSequence.js';

// What the notification-driven read tests share: an audience reading every stream through one
// relay, windows of writes with a hook between them, and a check, at a bound, that every
// subscriber got every entry once and in order.

export type StreamRecorder = Recorder & { stream: string };

/** The relay's read mode from its metrics; undefined while it reports neither. */
export async function readMode(fleet: Fleet): Promise<'notify' | 'batch' | undefined> {
  const text = await fleet.relays[0]!.metrics();
  if (metricValue(text, 'streamgate_relay_read_mode', 'mode="notify"') === 1) return 'notify';
  if (metricValue(text, 'streamgate_relay_read_mode', 'mode="batch"') === 1) return 'batch';
  return undefined;
}

/** `clients` clients each read every one of `streams` streams on the first relay, all live. */
export async function audience(
  fleet: Fleet,
  name: string,
  size: { streams: number; clients: number },
  cleanup: Array<() => unknown>,
): Promise<{ streams: string[]; recorders: StreamRecorder[] }> {
  const relay = fleet.relays[0]!;
  const streams = Array.from({ length: size.streams }, (_, i) => `${name}-${i}`);
  const recorders: StreamRecorder[] = [];
  for (let c = 0; c < size.clients; c++) {
    const client = new RelayClient({ urls: [relay.url], WebSocket, backoff: { baseMs: 50, maxMs: 1_000 } });
    cleanup.push(() => client.close());
    for (const stream of streams) recorders.push({ ...record(fleet, [relay.url], stream, { client }), stream });
  }
  await waitFor(() => recorders.every((r) => r.sub.state === 'live'), { timeoutMs: 20_000, message: 'not every subscription went live' });
  return { streams, recorders };
}

/** Writes seq 0…total-1 on every stream in windows of 20, calling `during` between windows. */
export async function writeAll(
  fleet: Fleet,
  streams: readonly string[],
  total: number,
  during: (window: number) => Promise<void>,
): Promise<void> {
  const redis = fleet.redis.client();
  for (let from = 0; from < total; from += 20) {
    await Promise.all(streams.map((s) => publishSequence(redis, s, from, from + 20, 20)));
    await during(from / 20);
  }
}

/** Waits up to `boundMs` for every recorder to hold seq 0…total-1 once, in order; returns ms since `since`. */
export async function everyoneHasAll(recorders: readonly StreamRecorder[], total: number, since: number, boundMs: number): Promise<number> {
  await waitFor(() => recorders.every((r) => r.seqs.length >= total), {
    timeoutMs: boundMs,
    message: `entries missing beyond the bound (${recorders.filter((r) => r.seqs.length >= total).length}/${recorders.length} complete)`,
  });
  for (const r of recorders) expect(gapsAndDuplicates(r.seqs, 0, total), r.stream).toBeNull();
  return Date.now() - since;
}

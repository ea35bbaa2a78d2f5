import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RelayClient } from '@streamgate/client';
import type { SubscriptionError } from '@streamgate/client';
import { demoStream } from '@streamgate/auth';
import { parseServerFrame } from '@streamgate/protocol';
import { createTokenIssuer, generateSigningKey, jwksDocument, SigningKeySet } from '@streamgate/server';
import type { TokenIssuer } from '@streamgate/server';
import { spawnRelay, startRedisInstances, waitFor } from '@streamgate/testkit';
import type { RedisInstances, RedisServer, RelayProcess } from '@streamgate/testkit';
import { startOutagePublisher } from './support/outagePublisher.js';
import { rawText } from './support/rawSocket.js';
import type { OutagePublisher } from './support/outagePublisher.js';
import { gapsAndDuplicates } from './support/recorder.js';
import { metricValue } from './support/startFleet.js';

// Four independent Redis instances behind one relay; one is SIGKILLed and restarted from its
// AOF (every acknowledged XADD is on disk before its reply, so it comes back with exactly the
// entries anyone was told about). The relay must serve the other three as if nothing happened.
const INSTANCES = 4;
const STREAMS_PER_INSTANCE = 2;
const DOWN_AFTER_MS = 1_500;
const ISSUER = 'streamgate-target-down-test';
const AUDIENCE = 'streamgate-relay';

/** What one client's sockets saw on the wire: how often it connected, and every refusal frame. */
interface Wire {
  opens: number;
  /** `error` and `unsubscribed` frames, as `op:code`. */
  refusals: string[];
  resets: number;
}

/** A `ws` class that counts its instances and the refusal frames they receive. */
function wireCounting(wire: Wire): new (url: string) => WebSocket {
  return class CountingWebSocket extends WebSocket {
    constructor(url: string) {
      super(url);
      wire.opens++;
      this.on('message', (data) => {
        const parsed = parseServerFrame(rawText(data));
        if (!parsed.ok) return;
        const frame = parsed.frame;
        if (frame.op === 'error') wire.refusals.push(`error:${frame.code}:${String(frame.retryable)}`);
        if (frame.op === 'unsubscribed') wire.refusals.push(`unsubscribed:${frame.reason}`);
        if (frame.op === 'stream_reset') wire.resets++;
      });
    }
  };
}

interface Reader {
  readonly instance: number;
  readonly stream: string;
  readonly seqs: number[];
  /** Arrival time of each event, ms. */
  readonly at: number[];
  readonly errors: SubscriptionError[];
  readonly recoveries: string[];
  state(): string;
}

let instances: RedisInstances | undefined;
let redis: readonly RedisServer[] = [];
let relay: RelayProcess | undefined;
let dir = '';
let tokens: TokenIssuer | undefined;
const cleanup: Array<() => unknown> = [];

beforeAll(async () => {
  instances = await startRedisInstances(INSTANCES, { args: ['--appendonly', 'yes', '--appendfsync', 'always'] });
  redis = instances.servers;
  const key = await generateSigningKey('ES256', 'target-down-key');
  const keys = await SigningKeySet.fromJson(JSON.stringify([key]));
  if (!keys.ok) throw new Error(keys.error.message);
  tokens = createTokenIssuer({ keys: keys.keys, issuer: ISSUER, audience: AUDIENCE, redis: redis[0]?.url ?? '' });
  dir = await mkdtemp(join(tmpdir(), 'target-down-'));
  await writeFile(join(dir, 'jwks.json'), JSON.stringify(jwksDocument(keys.keys)));
  relay = await spawnRelay({
    name: 'relay-target-down',
    authUrl: 'http://127.0.0.1:1',
    issuer: ISSUER,
    audience: AUDIENCE,
    redisAllowlist: redis.map((r) => r.url).join(','),
    env: {
      // Blank is unset: the keys come from the file instead.
      RELAY_JWKS_URL: '',
      RELAY_JWKS_FILE: join(dir, 'jwks.json'),
      RELAY_XREAD_BLOCK_MS: '1000',
      RELAY_REDIS_DOWN_AFTER_MS: String(DOWN_AFTER_MS),
      RELAY_DRAIN_WINDOW_MS: '500',
    },
  });
  const httpUrl = relay.httpUrl;
  await waitFor(async () => (await fetch(`${httpUrl}/readyz`)).status === 200, { timeoutMs: 20_000, message: 'relay never ready' });
}, 60_000);

afterAll(async () => {
  for (const fn of cleanup.reverse()) await fn();
  await relay?.service.stop();
  await instances?.stop();
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

/** One client per instance, each reading that instance's streams; returns the readers and the wires. */
function subscribeAll(url: string, issuer: TokenIssuer): { readers: Reader[]; wires: Wire[] } {
  const readers: Reader[] = [];
  const wires: Wire[] = [];
  for (let instance = 0; instance < INSTANCES; instance++) {
    const wire: Wire = { opens: 0, refusals: [], resets: 0 };
    wires.push(wire);
    const target = redis[instance]?.url ?? '';
    const client = new RelayClient({ urls: [url], WebSocket: wireCounting(wire), backoff: { baseMs: 50, maxMs: 500 } });
    cleanup.push(() => client.close());
    for (let k = 0; k < STREAMS_PER_INSTANCE; k++) {
      const stream = `td-${instance}-${k}`;
      const reader: Reader & { sub?: { state: string } } = {
        instance,
        stream,
        seqs: [],
        at: [],
        errors: [],
        recoveries: [],
        state: () => reader.sub?.state ?? 'none',
      };
      reader.sub = client.subscribe({
        getToken: () => issuer.issue(demoStream.for(stream), { subject: 'alice', redis: target }),
        onEvent: (data) => {
          reader.seqs.push(data.seq);
          reader.at.push(performance.now());
        },
        onError: (error) => reader.errors.push(error),
        onRecovery: (info) => reader.recoveries.push(info.recovery),
      });
      readers.push(reader);
    }
  }
  return { readers, wires };
}

describe('one of four Redis instances down', () => {
  it('SIGKILLed: the other three are served without a gap or a reconnect and the relay stays ready; its own subscribers get a retryable error, then resume with no gap', async () => {
    if (relay === undefined || tokens === undefined) throw new Error('not started');
    const httpUrl = relay.httpUrl;
    const victim = 0;
    const dead = redis[victim];
    if (dead === undefined) throw new Error('no victim');
    const { readers, wires } = subscribeAll(relay.url, tokens);
    await waitFor(() => readers.every((r) => r.state() === 'live'), { timeoutMs: 20_000, message: 'not every subscription went live' });

    const publishers = new Map<string, OutagePublisher>();
    for (const r of readers) publishers.set(r.stream, startOutagePublisher(redis[r.instance]?.url ?? '', r.stream, { pauseMs: 5 }));
    cleanup.push(() => Promise.all([...publishers.values()].map((p) => p.stop())));
    await waitFor(() => readers.every((r) => r.seqs.length >= 30), { timeoutMs: 20_000, message: 'no events before the kill' });

    // Readiness polled throughout: one dead target must never make the pod unready.
    const unready: string[] = [];
    let polling = true;
    const poller = (async () => {
      while (polling) {
        try {
          const res = await fetch(`${httpUrl}/readyz`, { signal: AbortSignal.timeout(2_000) });
          if (res.status !== 200) unready.push(`${res.status}: ${await res.text()}`);
        } catch (error) {
          // A probe the pod does not answer in time is what a load balancer counts as unready.
          if (!(error instanceof DOMException && error.name === 'TimeoutError')) throw error;
          unready.push('no answer within 2000 ms');
        }
        await new Promise((resolve) => setTimeout(resolve, 50)); // poll pacing, not a wait for a condition
      }
    })();
    cleanup.push(async () => {
      polling = false;
      await poller;
    });

    const healthy = readers.filter((r) => r.instance !== victim);
    const victims = readers.filter((r) => r.instance === victim);
    const killedAt = performance.now();
    const seqsAtKill = healthy.map((r) => r.seqs.length);
    const killed = await dead.kill('SIGKILL');
    expect(killed?.signal).toBe('SIGKILL');

    await waitFor(() => victims.every((r) => r.errors.some((e) => e.code === 'stream_unavailable' && e.retryable)), {
      timeoutMs: DOWN_AFTER_MS + 5_000,
      message: "the dead instance's subscribers were never told it is unavailable",
    });
    // The others kept flowing meanwhile, and well past it.
    await waitFor(() => healthy.every((r, i) => r.seqs.length >= (seqsAtKill[i] ?? 0) + 100), {
      timeoutMs: 10_000,
      message: 'the healthy instances stopped flowing while one was down',
    });
    const readyz = await fetch(`${httpUrl}/readyz`, { signal: AbortSignal.timeout(5_000) });
    const body = await readyz.text();
    expect(readyz.status).toBe(200);
    expect(body).toContain(`${dead.url} down`);
    for (const r of redis.filter((_, i) => i !== victim)) expect(body).toContain(`${r.url} up`);
    const metrics = await (await fetch(`${httpUrl}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
    expect(metricValue(metrics, 'streamgate_relay_redis_target_up', `target="${dead.url}"`)).toBe(0);
    expect(metricValue(metrics, 'streamgate_relay_redis_target_up')).toBe(INSTANCES - 1);

    await dead.restart();
    const restartedAt = performance.now();
    const resumedFrom = victims.map((r) => publishers.get(r.stream)?.published ?? 0);
    await waitFor(() => victims.every((r, i) => (publishers.get(r.stream)?.published ?? 0) >= (resumedFrom[i] ?? 0) + 50), {
      timeoutMs: 20_000,
      message: 'publishing to the restarted instance never resumed',
    });
    const totals = new Map<string, number>();
    for (const [stream, p] of publishers) totals.set(stream, await p.stop());
    await waitFor(() => readers.every((r) => r.seqs.length >= (totals.get(r.stream) ?? Infinity)), {
      timeoutMs: 20_000,
      message: 'not every subscription caught up with its stream',
    });
    polling = false;
    await poller;

    const problems = readers
      .map((r) => ({ stream: r.stream, problem: gapsAndDuplicates(r.seqs, 0, totals.get(r.stream) ?? -1), recoveries: r.recoveries }))
      .filter((p) => p.problem !== null || p.recoveries.length > 0);
    expect(problems).toEqual([]);
    expect(unready).toEqual([]);
    const healthyWires = wires.filter((_, i) => i !== victim);
    expect(healthyWires.map((w) => ({ opens: w.opens, refusals: w.refusals, resets: w.resets }))).toEqual(
      healthyWires.map(() => ({ opens: 1, refusals: [], resets: 0 })),
    );
    expect(healthy.flatMap((r) => r.errors)).toEqual([]);
    // The longest silence of a healthy subscription between the kill and the restart.
    const stall = Math.max(
      ...healthy.map((r) => {
        const during = r.at.filter((t) => t >= killedAt && t <= restartedAt);
        return Math.max(0, ...during.slice(1).map((t, i) => t - (during[i] ?? t)));
      }),
    );
    expect(stall).toBeLessThan(1_000);
    const victimWire = wires[victim];
    expect(victimWire?.opens).toBe(1);
    expect(victimWire?.refusals).toContain('unsubscribed:stream_unavailable');
    for (const refusal of victimWire?.refusals ?? [])
      expect(refusal).toMatch(/^(unsubscribed:stream_unavailable|error:stream_unavailable:true)$/);
    console.log(
      `target down: totals ${[...totals.values()].join(',')}; victim refusals ${victimWire?.refusals.length ?? 0} (${[...new Set(victimWire?.refusals)].join(', ')}); longest healthy stall ${Math.round(stall)} ms; readyz non-200 ${unready.length}`,
    );
  }, 120_000);
});

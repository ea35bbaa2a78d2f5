import WebSocket from 'ws';
import { createTRPCClient, httpBatchLink } from '@trpc/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayClient } from '@streamgate/client';
import type { SubscriptionError } from '@streamgate/client';
import { demoStream } from '@streamgate/auth';
import { INGEST_DEMAND_KEY } from '@streamgate/demand';
import type { DemoEvent, DemoRouter } from '@streamgate/auth';
import { relayClaimsSchema } from '@streamgate/protocol';
import { createPublisher, createTokenIssuer, generateSigningKey, placeStream, SigningKeySet } from '@streamgate/server';
import type { PrivateJwk } from '@streamgate/server';
import { spawnAuth, spawnRelay, startRedisInstances, waitFor } from '@streamgate/testkit';
import type { AppProcess, RedisInstances } from '@streamgate/testkit';

const ISSUER = 'placement-auth';
const AUDIENCE = 'placement-relay';
const NAMES = Array.from({ length: 10_000 }, (_, i) => `p${i}`);
const THROUGH_AUTH = 400;

function claimedRedis(token: string): string {
  const part = token.split('.')[1] ?? '';
  return relayClaimsSchema.parse(JSON.parse(Buffer.from(part, 'base64url').toString('utf8'))).redis;
}

function authProcess(signingKey: PrivateJwk, targets: readonly string[]): Promise<AppProcess> {
  return spawnAuth({
    issuer: ISSUER,
    audience: AUDIENCE,
    // Blank is unset: this auth names several instances, never one URL.
    redisUrl: '',
    signingKeys: JSON.stringify([signingKey]),
    // Demand for every demo stream, so minting also shows where auth registers ingest demand.
    env: { NODE_ENV: 'test', AUTH_DEMO_ROUTER: 'true', AUTH_REDIS_TARGETS: targets.join(','), AUTH_DEMAND_PREFIXES: 'demo:' },
  });
}

const trpcOf = (auth: AppProcess) =>
  createTRPCClient<DemoRouter>({ links: [httpBatchLink({ url: `${auth.httpUrl}/trpc`, maxURLLength: 4_000 })] });

/** Every `demo:*` key on each instance, by instance URL. */
async function keysByInstance(instances: RedisInstances): Promise<Map<string, Set<string>>> {
  const found = new Map<string, Set<string>>();
  for (const server of instances.servers) {
    const client = server.client();
    const keys = new Set<string>();
    let cursor = '0';
    do {
      const [next, batch] = await client.scan(cursor, 'MATCH', 'demo:*', 'COUNT', 2_000);
      for (const key of batch) keys.add(key);
      cursor = next;
    } while (cursor !== '0');
    await client.quit();
    found.set(server.url, keys);
  }
  return found;
}

describe('streams placed over several standalone instances', () => {
  let instances: RedisInstances;
  let four: string[];
  let five: string[];
  let signingKey: PrivateJwk;
  const stops: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    instances = await startRedisInstances(5);
    four = instances.urls.slice(0, 4);
    five = [...instances.urls];
    signingKey = await generateSigningKey('ES256', 'placement-key');
  }, 60_000);
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop();
    await instances?.stop();
  });

  it('tokens name the instance the publisher writes to; a fifth instance moves about a fifth; moved streams flow for new tokens', async () => {
    // 1. Four instances. Tokens from the real auth process for a sample, from the same issuer
    //    code in-process for all 10,000 (10,000 HTTP round trips would dominate the run).
    const auth4 = await authProcess(signingKey, four);
    stops.push(() => auth4.service.stop());
    const trpc4 = trpcOf(auth4);
    const loaded = await SigningKeySet.fromJwks([signingKey]);
    if (!loaded.ok) throw new Error(loaded.error.message);
    const issuer4 = createTokenIssuer({ keys: loaded.keys, issuer: ISSUER, audience: AUDIENCE, redis: four });
    const claim4 = new Map<string, string>();
    for (const name of NAMES) claim4.set(name, claimedRedis((await issuer4.issue(demoStream.for(name), { subject: 'u' })).token));
    for (let i = 0; i < THROUGH_AUTH; i += 50) {
      const batch = NAMES.slice(i, i + 50);
      const subs = await Promise.all(batch.map((stream) => trpc4.demo.token.query({ stream, user: 'alice' })));
      for (const [j, sub] of subs.entries()) expect(claimedRedis(sub.token)).toBe(claim4.get(batch[j] ?? ''));
    }

    // Auth registered ingest demand for each minted stream on the instance its token names, only there.
    const minted = NAMES.slice(0, THROUGH_AUTH).map((name) => `demo:${name}`);
    const demandOf = async (url: string): Promise<Set<string>> => {
      const server = instances.servers.find((s) => s.url === url);
      if (server === undefined) throw new Error(`no instance ${url}`);
      const client = server.client();
      const members: string[] = await client.zrange(INGEST_DEMAND_KEY, '0', '-1');
      await client.quit();
      return new Set(members);
    };
    await waitFor(async () => (await Promise.all(four.map(demandOf))).reduce((n, set) => n + set.size, 0) === THROUGH_AUTH, {
      timeoutMs: 10_000,
      message: 'auth did not register demand for every minted stream',
    });
    for (const url of four) {
      const expected = minted.filter((stream) => claim4.get(stream.slice('demo:'.length)) === url).sort();
      expect([...(await demandOf(url))].sort()).toEqual(expected);
    }

    // 2. The publisher, given the same list, writes every stream; each is found on the instance
    //    its token names, and on no other.
    const publisher4 = createPublisher({ targets: four });
    for (let i = 0; i < NAMES.length; i += 500) {
      const results = await Promise.all(
        NAMES.slice(i, i + 500).map((name) => publisher4.publish(demoStream.for(name), { seq: 0, text: 'before', at: '' })),
      );
      for (const result of results) if (!result.ok) throw new Error(result.error.message);
    }
    await publisher4.close();
    const found = await keysByInstance(instances);
    let checked = 0;
    for (const name of NAMES) {
      const holders = [...found.entries()].filter(([, keys]) => keys.has(`demo:${name}`)).map(([url]) => url);
      expect(holders).toEqual([claim4.get(name)]);
      checked += 1;
    }
    expect(checked).toBe(10_000);
    const perInstance = four.map((url) => found.get(url)?.size ?? 0);
    console.log(`10,000 streams over 4 instances: ${perInstance.join(' / ')}`);
    for (const count of perInstance) expect(count).toBeGreaterThan(2_000);

    // 3. A fifth instance: about a fifth of the streams move, all of them to the new instance.
    const moved = NAMES.filter((name) => placeStream(`demo:${name}`, five) !== claim4.get(name));
    const fraction = moved.length / NAMES.length;
    console.log(`adding a fifth instance moved ${moved.length} of 10,000 streams (${(fraction * 100).toFixed(1)}%)`);
    expect(fraction).toBeGreaterThan(0.15);
    expect(fraction).toBeLessThan(0.25);
    for (const name of moved) expect(placeStream(`demo:${name}`, five)).toBe(five[4]);

    // 4. Auth and the publisher now list five; a relay allowlists all five. A subscriber of a moved
    //    stream holding a NEW token (naming the fifth instance) receives what is published after the move.
    await auth4.service.stop();
    const auth5 = await authProcess(signingKey, five);
    stops.push(() => auth5.service.stop());
    const trpc5 = trpcOf(auth5);
    const relay = await spawnRelay({
      name: 'relay-placement',
      authUrl: auth5.httpUrl,
      issuer: ISSUER,
      audience: AUDIENCE,
      redisAllowlist: five.join(','),
    });
    stops.push(() => relay.service.stop());
    await waitFor(async () => (await fetch(`${relay.httpUrl}/readyz`)).status === 200, {
      timeoutMs: 20_000,
      message: 'the relay never became ready',
    });

    const sample = moved.slice(0, 3);
    for (const name of sample) expect(claimedRedis((await trpc5.demo.token.query({ stream: name, user: 'alice' })).token)).toBe(five[4]);
    const client = new RelayClient({ urls: [relay.url], WebSocket, backoff: { baseMs: 50, maxMs: 1_000 } });
    stops.push(() => Promise.resolve(client.close()));
    const received = new Map<string, number[]>(sample.map((name) => [name, []]));
    const errors: SubscriptionError[] = [];
    const subs = sample.map((name) =>
      client.subscribe<DemoEvent>({
        getToken: () => trpc5.demo.token.query({ stream: name, user: 'alice' }),
        onEvent: (data) => received.get(name)?.push(data.seq),
        onError: (error) => errors.push(error),
      }),
    );
    await waitFor(() => subs.every((s) => s.state === 'live'), { timeoutMs: 20_000, message: 'the subscriptions never went live' });
    const publisher5 = createPublisher({ targets: five });
    for (let seq = 1; seq <= 20; seq += 1) {
      for (const name of sample) {
        const result = await publisher5.publish(demoStream.for(name), { seq, text: 'after the move', at: '' });
        if (!result.ok) throw new Error(result.error.message);
      }
    }
    await publisher5.close();
    await waitFor(() => sample.every((name) => (received.get(name)?.length ?? 0) >= 20), {
      timeoutMs: 20_000,
      message: 'the moved streams’ events did not all arrive',
    });
    for (const name of sample) expect(received.get(name)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(errors).toEqual([]);
    // Written on the new instance: the old one keeps only the entry from before the move.
    const fifth = instances.servers[4]?.client();
    for (const name of sample) expect(await fifth?.xlen(`demo:${name}`)).toBe(20);
    await fifth?.quit();
  }, 180_000);
});

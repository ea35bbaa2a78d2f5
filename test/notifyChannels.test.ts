import { describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { RelayClient } from '@streamgate/client';
import type { Subscription } from '@streamgate/client';
import { waitFor } from '@streamgate/testkit';
import { createPublisher } from '@streamgate/server';
import { liveChannel } from '@streamgate/redis';
import { REVOCATIONS_CHANNEL } from '@streamgate/protocol';
import { demoStream } from '@streamgate/auth';
import type { DemoEvent } from '@streamgate/auth';
import { metricValue, useFleet } from './support/startFleet.js';
import { mintToken } from './support/mintToken.js';

const LINGER_MS = 300;
const getFleet = useFleet({
  relays: 1,
  redisArgs: ['--notify-keyspace-events', 'Kt'],
  relayEnv: { RELAY_STREAM_LINGER_MS: String(LINGER_MS), RELAY_MAX_SUBSCRIPTIONS_PER_SOCKET: '1000', RELAY_READ_MODE: 'notify' },
});

const STREAMS = 10_000;
const PER_SOCKET = 500;

describe('keyspace and live channels follow the watched set', () => {
  it('holds a keyspace and a live channel per watched stream at 10,000 streams, and drops them as clients leave and linger ends', async () => {
    const fleet = getFleet();
    const relay = fleet.relays[0]!;
    const admin = fleet.redis.client();
    // Every channel the server holds but the revocation channel, which each relay holds once
    // whatever it watches (protocol §10).
    const channels = async (): Promise<number> => {
      const all = Number(/pubsub_channels:(\d+)/.exec(String(await admin.info('stats')))?.[1] ?? NaN);
      const revocationSubscribers = Number(((await admin.call('PUBSUB', 'NUMSUB', REVOCATIONS_CHANNEL)) as unknown[])[1]);
      return all - (revocationSubscribers > 0 ? 1 : 0);
    };
    const names = Array.from({ length: STREAMS }, (_, i) => `chan-${i}`);
    const tokens = await Promise.all(
      names.map((n) => mintToken(fleet.signingKey, { stream: demoStream.for(n).name, redis: fleet.redis.url })),
    );
    const clients: RelayClient[] = [];
    const subs: Array<Subscription<DemoEvent>> = [];
    const received = new Map<string, number>();
    // Exactly the watched streams' live channels, no more and no fewer.
    const liveChannels = async (): Promise<string[]> => ((await admin.call('PUBSUB', 'CHANNELS', 'streamgate@0:*')) as string[]).sort();
    const liveOf = (watched: readonly string[]): string[] => watched.map((n) => liveChannel(demoStream.for(n).name, 0) ?? '').sort();
    for (let i = 0; i < STREAMS; i++) {
      if (i % PER_SOCKET === 0) clients.push(new RelayClient({ urls: [relay.url], WebSocket, backoff: { baseMs: 50, maxMs: 1_000 } }));
      const name = names[i]!;
      subs.push(
        clients[clients.length - 1]!.subscribe<DemoEvent>({
          getToken: () => Promise.resolve({ token: tokens[i]!, stream: demoStream.for(name).name, expiresAt: Date.now() + 300_000 }),
          onEvent: () => received.set(name, (received.get(name) ?? 0) + 1),
        }),
      );
    }
    try {
      await waitFor(() => subs.every((s) => s.state === 'live'), {
        timeoutMs: 60_000,
        message: () => `not every subscription went live (${subs.filter((s) => s.state === 'live').length}/${STREAMS})`,
      });
      await waitFor(async () => (await channels()) === 2 * STREAMS, { timeoutMs: 10_000, message: 'channels never reached 2 × 10,000' });
      expect(await liveChannels()).toEqual(liveOf(names));
      const sample = (await admin.call('PUBSUB', 'NUMSUB', `__keyspace@0__:${demoStream.for('chan-17').name}`)) as unknown[];
      expect(sample[1]).toBe(1);

      // Woken reads deliver: one entry on every 100th stream.
      const publisher = createPublisher({ redis: fleet.redis.client() });
      const written = names.filter((_, i) => i % 100 === 0);
      for (const n of written) await publisher.publish(demoStream.for(n), { seq: 0, text: n, at: new Date().toISOString() });
      await waitFor(() => written.every((n) => received.get(n) === 1), { timeoutMs: 10_000, message: 'woken reads did not deliver' });

      // Half the sockets leave: after the linger their streams' channels are gone, the others stay.
      for (const c of clients.splice(0, clients.length / 2)) c.close();
      await waitFor(async () => (await channels()) === STREAMS, {
        timeoutMs: LINGER_MS + 10_000,
        message: 'channels did not follow the clients that left',
      });
      expect(await liveChannels()).toEqual(liveOf(names.slice(STREAMS / 2)));
      expect(metricValue(await relay.metrics(), 'streamgate_relay_streams')).toBe(STREAMS / 2);
      const gone = (await admin.call('PUBSUB', 'NUMSUB', `__keyspace@0__:${demoStream.for('chan-17').name}`)) as unknown[];
      expect(gone[1]).toBe(0);
      const goneLive = (await admin.call('PUBSUB', 'NUMSUB', liveChannel(demoStream.for('chan-17').name, 0) ?? '')) as unknown[];
      expect(goneLive[1]).toBe(0);

      for (const c of clients.splice(0)) c.close();
      await waitFor(async () => (await channels()) === 0, {
        timeoutMs: LINGER_MS + 10_000,
        message: 'channels leaked after every client left',
      });
      expect(await liveChannels()).toEqual([]);
    } finally {
      for (const c of clients) c.close();
    }
  });
});
